import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/app/services.ts';
import { SkillAuthoringDenied, SkillManageInvocationReused } from '../../src/authoring/authoring-errors.ts';
import { parseManageInvocation } from '../../src/authoring/skill-manage-contract.ts';
import { findReplay } from '../../src/authoring/skill-manage-idempotency.ts';
import { conflict, createSkillManage, deny } from '../../src/authoring/skill-manage.ts';
import { SkillNotFound, SkillRevisionConflict } from '../../src/skills/skill-errors.ts';
import { listSkillEvents } from '../../src/store/skill-event-repository.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import { createRequest, trustedContext } from './authoring-fixtures.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';
import type { TestDatabase } from '../support/database.ts';
import { openTestServices } from '../support/test-services.ts';

/** The steps of skill_manage that read or write the database, each on its own against real Postgres. */
let database: TestDatabase;
let services: Services;
let repository: SkillRepository;

beforeAll(async () => {
  ({ database, services } = await openTestServices({}, { activatedTenants: ['steps-replay'] }));
  repository = services.skills;
});

afterAll(async () => {
  await database?.close();
});

describe('the revision state skill_manage reads', () => {
  it('reads the last revision handed out from skills.latest_revision, archived revisions included', async () => {
    const tenant = 'steps-latest';
    expect(await repository.latestRevision(tenant, 'deploy')).toBe(0);
    await repository.install(tenant, skillPackage({ name: 'deploy' }), { source: 'operator' });
    await repository.install(tenant, skillPackage({ name: 'deploy', version: '1.1.0' }), { source: 'operator' });
    await repository.archive(tenant, 'deploy', 2);
    expect(await repository.latestRevision(tenant, 'deploy')).toBe(2);
    expect((await repository.findRevision(tenant, 'deploy'))?.revision).toBe(1);
    expect(await repository.latestRevision('steps-other-tenant', 'deploy')).toBe(0);
  });

  it('finds nothing as undefined and resolves nothing as SkillNotFound', async () => {
    expect(await repository.findRevision('steps-latest', 'missing')).toBeUndefined();
    expect(await repository.findRevision('steps-latest', 'deploy@9')).toBeUndefined();
    await expect(repository.resolve('steps-latest', 'missing')).rejects.toBeInstanceOf(SkillNotFound);
  });
});

describe('findReplay', () => {
  it('finds nothing before the invocation took effect, then its outcome, and refuses its id with other arguments', async () => {
    const tenant = 'steps-replay';
    const skills = createSkillManage({
      pool: database.pool,
      repository,
      defaultLicense: 'Apache-2.0',
      settings: { enabled: true, approvalProfile: 'none' },
      activation: services.rollout,
    });
    const invocation = parseManageInvocation(trustedContext(tenant, 'inv-replay'), createRequest('deploy'));
    expect(await findReplay(database.pool, invocation)).toBeUndefined();

    const applied = await skills.manage(invocation.context, invocation.request);
    expect(await findReplay(database.pool, invocation)).toEqual({ ...applied, replayed: true });

    const reused = parseManageInvocation(trustedContext(tenant, 'inv-replay'), createRequest('other'));
    await expect(findReplay(database.pool, reused)).rejects.toBeInstanceOf(SkillManageInvocationReused);
  });
});

describe('recording refusals', () => {
  it('deny records an authoring.denied event with its reason and detail, then throws SkillAuthoringDenied', async () => {
    const tenant = 'steps-deny';
    const invocation = parseManageInvocation(trustedContext(tenant, 'inv-deny', { sessionId: 'session-1' }), createRequest('deploy'));
    const denial = { reason: 'source' as const, message: 'skill deploy has source builtin', detail: { source: 'builtin' } };
    await expect(deny(database.pool, invocation, denial)).rejects.toBeInstanceOf(SkillAuthoringDenied);
    const events = await listSkillEvents(database.pool, tenant, { invocationId: 'inv-deny' });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'authoring.denied',
      reason: 'source',
      name: 'deploy',
      sessionId: 'session-1',
      runId: 'run-of-inv-deny',
      detail: { operation: 'create', principalId: 'principal-ada', review: false, source: 'builtin' },
    });
  });

  it('conflict records an authoring.conflict event with both revisions, then throws SkillRevisionConflict', async () => {
    const tenant = 'steps-conflict';
    const request = { operation: 'archive', name: 'deploy', expectedRevision: 2 };
    const invocation = parseManageInvocation(trustedContext(tenant, 'inv-conflict'), request);
    const failure = await conflict(database.pool, invocation, { expectedRevision: 2, currentRevision: 3 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SkillRevisionConflict);
    expect(failure).toMatchObject({ expectedRevision: 2, currentRevision: 3 });
    const events = await listSkillEvents(database.pool, tenant, { invocationId: 'inv-conflict' });
    expect(events.map(({ kind, revision, reason, detail }) => ({ kind, revision, reason, detail }))).toEqual([
      {
        kind: 'authoring.conflict',
        revision: 3,
        reason: 'expected_revision',
        detail: { operation: 'archive', expectedRevision: 2, currentRevision: 3 },
      },
    ]);
  });
});
