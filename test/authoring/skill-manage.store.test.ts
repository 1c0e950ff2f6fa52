import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/app/services.ts';
import { SkillAuthoringDenied, SkillAuthoringDisabled, SkillManageInvocationReused } from '../../src/authoring/authoring-errors.ts';
import { createSkillManage, type SkillManage } from '../../src/authoring/skill-manage.ts';
import { type SkillManageContext } from '../../src/authoring/skill-manage-contract.ts';
import { readPackageArchive } from '../../src/skills/package-archive.ts';
import { SkillNotFound, SkillProvenanceInvalid, SkillRevisionConflict } from '../../src/skills/skill-errors.ts';
import { SkillNameNotUnique } from '../../src/skills/validation-errors.ts';
import { listSkillEvents } from '../../src/store/skill-event-repository.ts';
import { findSkillManageInvocation } from '../../src/authoring/skill-manage-invocation-repository.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import { countSkillRows, type TestDatabase } from '../support/database.ts';
import { openTestServices } from '../support/test-services.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';
import { createRequest, skillMd, trustedContext } from './authoring-fixtures.ts';

let database: TestDatabase;
let repository: SkillRepository;
let skills: SkillManage;
let services: Services;
const decoder = new TextDecoder();

beforeAll(async () => {
  ({ database, services } = await openTestServices(
    { enabled: true, approvalProfile: 'none' },
    { activatedTenants: ['t-archive', 't-conflict', 't-idem', 't-patch', 't-review', 't-scope', 't-source', 't-structural', 't-trust'] },
  ));
  repository = services.skills;
  skills = services.skillManage;
});

afterAll(async () => {
  await database?.close();
});

async function revisionCount(tenantId: string): Promise<number> {
  return (await countSkillRows(database.pool, tenantId)).revisions;
}

async function eventsOf(tenantId: string, invocationId: string) {
  return listSkillEvents(database.pool, tenantId, { invocationId });
}

/** Expect a denial with the given reason, one authoring.denied event for the invocation, and nothing written. */
async function expectDenied(
  context: SkillManageContext,
  request: unknown,
  reason: string,
  message: RegExp,
): Promise<Record<string, unknown>> {
  const before = await countSkillRows(database.pool, context.tenantId);
  const failure = await skills.manage(context, request).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(SkillAuthoringDenied);
  expect((failure as SkillAuthoringDenied).reason).toBe(reason);
  expect((failure as Error).message).toMatch(message);
  const events = await eventsOf(context.tenantId, context.invocationId);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ kind: 'authoring.denied', reason, runId: context.runId });
  expect(await countSkillRows(database.pool, context.tenantId)).toEqual(before);
  expect(await findSkillManageInvocation(database.pool, context.tenantId, context.invocationId)).toBeUndefined();
  return events[0]!.detail;
}

describe('gate.skill.authoring_scope', () => {
  const tenant = 't-scope';

  it.each([
    ['no scopes at all', []],
    ['skill.writex', ['skill.writex']],
    ['skill', ['skill']],
    ['skills:write', ['skills:write']],
    ['skill.write with a trailing space', ['skill.write ']],
    ['SKILL.WRITE', ['SKILL.WRITE']],
    ['skill.*', ['session.write', 'skill.*']],
  ])('denies a principal holding %s at the policy stage, naming skill.write, and records the event', async (label, scopes) => {
    const invocationId = `inv-scope-${label.replace(/\W+/g, '-')}`;
    const detail = await expectDenied(
      trustedContext(tenant, invocationId, { scopes }),
      createRequest('scoped-skill'),
      'scope',
      /required scope skill\.write/,
    );
    expect(detail).toMatchObject({ requiredScope: 'skill.write', scopes });
  });

  it('accepts the same call with skill.write', async () => {
    const result = await skills.manage(trustedContext(tenant, 'inv-scope-ok'), createRequest('scoped-skill'));
    expect(result).toMatchObject({ status: 'installed', name: 'scoped-skill', revision: 1, replayed: false });
    expect((await eventsOf(tenant, 'inv-scope-ok')).map((event) => event.kind)).toEqual(['authoring.created']);
  });
});

describe('gate.skill.authoring_trust', () => {
  const tenant = 't-trust';
  const corpus = [
    'read a web page (https://example.com/how-to)',
    'an MCP tool result (github.search_issues)',
    "another skill's body (repository-analysis@1)",
    'a file the user uploaded (notes.pdf)',
  ];

  beforeAll(async () => {
    await skills.manage(trustedContext(tenant, 'inv-trust-seed'), createRequest('trusted-skill'));
  });

  it.each(corpus.map((taint, index) => [taint, index]))(
    'denies a create after the turn %s, with origin_trust as the reason',
    async (taint, index) => {
      const context = trustedContext(tenant, `inv-trust-create-${index}`, { originTrust: 'untrusted', taint: String(taint) });
      const detail = await expectDenied(context, createRequest(`tainted-${index}`), 'origin_trust', /origin trust untrusted is below user/);
      expect(detail).toMatchObject({ originTrust: 'untrusted', taint });
      await expect(repository.resolve(tenant, `tainted-${index}`)).rejects.toBeInstanceOf(SkillNotFound);
    },
  );

  it.each(corpus.map((taint, index) => [taint, index]))(
    'denies a patch after the turn %s, with origin_trust as the reason',
    async (taint, index) => {
      const context = trustedContext(tenant, `inv-trust-patch-${index}`, { originTrust: 'untrusted', taint: String(taint) });
      await expectDenied(
        context,
        { operation: 'patch', name: 'trusted-skill', expectedRevision: 1, skillMd: skillMd('trusted-skill', `# Injected ${index}`) },
        'origin_trust',
        /confined to trusted turns/,
      );
    },
  );

  it('leaves no revision behind from the whole corpus, and counts every denial', async () => {
    expect(await revisionCount(tenant)).toBe(1);
    const denials = await listSkillEvents(database.pool, tenant, { kind: 'authoring.denied' });
    expect(denials).toHaveLength(corpus.length * 2);
    expect(new Set(denials.map((event) => event.reason))).toEqual(new Set(['origin_trust']));
  });

  it('allows operator and user origin trust', async () => {
    await expect(
      skills.manage(trustedContext(tenant, 'inv-trust-operator', { originTrust: 'operator' }), createRequest('operator-turn')),
    ).resolves.toMatchObject({ status: 'installed', revision: 1 });
  });
});

describe('gate.skill.edit_conflict', () => {
  const tenant = 't-conflict';
  const name = 'contested';

  it('lets exactly one of two concurrent patches with the same expectedRevision write; the loser gets the winner revision', async () => {
    await skills.manage(trustedContext(tenant, 'inv-conflict-create'), createRequest(name, { extraFiles: { 'references/a.md': 'A' } }));
    const sentinels = ['SENTINEL-ALPHA-7f3a', 'SENTINEL-BRAVO-91c2'];
    const outcomes = await Promise.allSettled(
      sentinels.map((sentinel, index) =>
        skills.manage(trustedContext(tenant, `inv-conflict-patch-${index}`), {
          operation: 'patch',
          name,
          expectedRevision: 1,
          skillMd: skillMd(name, `# Instructions\n\n1. ${sentinel}`),
        }),
      ),
    );
    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const losers = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect((winners[0] as PromiseFulfilledResult<{ revision: number }>).value.revision).toBe(2);
    expect(losers[0]!.reason).toBeInstanceOf(SkillRevisionConflict);
    expect((losers[0]!.reason as SkillRevisionConflict).currentRevision).toBe(2);

    const loserIndex = outcomes.findIndex((outcome) => outcome.status === 'rejected');
    const loserSentinel = sentinels[loserIndex]!;
    const winnerSentinel = sentinels[1 - loserIndex]!;

    // No number skipped: exactly revisions 1 and 2 exist.
    const revisions = await database.pool.query<{ revision: number; body: string }>(
      `SELECT revision, body FROM skill_revisions WHERE tenant_id = $1 AND name = $2 ORDER BY revision`,
      [tenant, name],
    );
    expect(revisions.rows.map((row) => row.revision)).toEqual([1, 2]);
    expect(revisions.rows[1]!.body).toContain(winnerSentinel);

    // The loser's content is nowhere: not in a row, an archive, an invocation record or an event.
    expect(revisions.rows.some((row) => row.body.includes(loserSentinel))).toBe(false);
    const archives = await database.pool.query<{ bytes: Buffer }>(`SELECT bytes FROM skill_packages WHERE tenant_id = $1`, [tenant]);
    expect(archives.rows).toHaveLength(2);
    for (const row of archives.rows) {
      const unpacked = await readPackageArchive(new Uint8Array(row.bytes), name);
      for (const bytes of unpacked.files.values()) expect(decoder.decode(bytes)).not.toContain(loserSentinel);
    }
    const elsewhere = await database.pool.query<{ found: string }>(
      `SELECT (SELECT count(*) FROM skill_manage_invocations WHERE tenant_id = $1 AND result::text LIKE $2)
            + (SELECT count(*) FROM skill_events WHERE tenant_id = $1 AND detail::text LIKE $2) AS found`,
      [tenant, `%${loserSentinel}%`],
    );
    expect(Number(elsewhere.rows[0]!.found)).toBe(0);
    expect(await findSkillManageInvocation(database.pool, tenant, `inv-conflict-patch-${loserIndex}`)).toBeUndefined();

    // The conflict is an event carrying both revisions.
    const conflictEvents = await eventsOf(tenant, `inv-conflict-patch-${loserIndex}`);
    expect(conflictEvents).toHaveLength(1);
    expect(conflictEvents[0]).toMatchObject({
      kind: 'authoring.conflict',
      revision: 2,
      detail: { expectedRevision: 1, currentRevision: 2, operation: 'patch' },
    });
  });

  it('refuses a stale edit with the current revision and writes nothing; the retry at the current revision gets the next number', async () => {
    const before = await countSkillRows(database.pool, tenant);
    const failure = await skills
      .manage(trustedContext(tenant, 'inv-conflict-stale'), {
        operation: 'edit',
        name,
        expectedRevision: 1,
        package: createRequest(name, { body: '# Stale edit' }).package,
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SkillRevisionConflict);
    expect((failure as SkillRevisionConflict).currentRevision).toBe(2);
    expect(await countSkillRows(database.pool, tenant)).toEqual(before);
    const retried = await skills.manage(trustedContext(tenant, 'inv-conflict-retry'), {
      operation: 'edit',
      name,
      expectedRevision: 2,
      package: createRequest(name, { body: '# Fresh edit' }).package,
    });
    expect(retried.status === 'installed' && retried.revision).toBe(3);
  });
});

describe('skill_manage idempotency (invocation id + canonical argument hash)', () => {
  const tenant = 't-idem';

  it('returns the same revision for a retried invocation, whatever the key order, and writes once', async () => {
    const request = createRequest('retried', { extraFiles: { 'b.md': 'b', 'a.md': 'a' } });
    const first = await skills.manage(trustedContext(tenant, 'inv-idem-1'), request);
    const reordered = {
      package: { files: Object.fromEntries(Object.entries(request.package.files).reverse()) },
      name: 'retried',
      operation: 'create',
    };
    const second = await skills.manage(trustedContext(tenant, 'inv-idem-1'), reordered);
    expect(first).toMatchObject({ status: 'installed', revision: 1, replayed: false });
    expect(second).toEqual({ ...first, replayed: true });
    expect(await revisionCount(tenant)).toBe(1);
    const installed = await repository.resolve(tenant, 'retried');
    expect(installed.authoredBy?.idempotencyKey).toMatch(/^inv-idem-1:[0-9a-f]{64}$/);
  });

  it('gives two concurrent deliveries of one invocation one revision, the second a replay', async () => {
    const request = createRequest('delivered-twice');
    const both = await Promise.all([
      skills.manage(trustedContext(tenant, 'inv-idem-concurrent'), request),
      skills.manage(trustedContext(tenant, 'inv-idem-concurrent'), request),
    ]);
    expect(both.map((result) => result.status === 'installed' && result.revision)).toEqual([1, 1]);
    expect(both.map((result) => result.replayed).sort()).toEqual([false, true]);
    const patch = { operation: 'patch', name: 'delivered-twice', expectedRevision: 1, skillMd: skillMd('delivered-twice', '# Twice') };
    const patched = await Promise.all([
      skills.manage(trustedContext(tenant, 'inv-idem-concurrent-patch'), patch),
      skills.manage(trustedContext(tenant, 'inv-idem-concurrent-patch'), patch),
    ]);
    expect(patched.map((result) => result.status === 'installed' && result.revision)).toEqual([2, 2]);
    const rows = await database.pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM skill_revisions WHERE tenant_id = $1 AND name = 'delivered-twice'`,
      [tenant],
    );
    expect(Number(rows.rows[0]!.count)).toBe(2);
  });

  it('a delivery that reads the skill after its own twin committed replays it (create, patch, archive), on any timing', async () => {
    // The race the test above meets only by chance: this delivery has looked for a replay and found
    // none, and its twin commits before it reads the skill's state.
    let twin: (() => Promise<unknown>) | undefined;
    const afterTwin = async () => {
      const deliver = twin;
      twin = undefined;
      await deliver?.();
    };
    const lagging = createSkillManage({
      pool: database.pool,
      repository: {
        ...repository,
        findRevision: async (...args) => (await afterTwin(), repository.findRevision(...args)),
        latestRevision: async (...args) => (await afterTwin(), repository.latestRevision(...args)),
      },
      defaultLicense: 'Apache-2.0',
      settings: { enabled: true, approvalProfile: 'none' },
      activation: services.rollout,
    });
    const create = createRequest('twin-delivered');
    twin = () => skills.manage(trustedContext(tenant, 'inv-twin-create'), create);
    expect(await lagging.manage(trustedContext(tenant, 'inv-twin-create'), create)).toMatchObject({
      status: 'installed',
      revision: 1,
      replayed: true,
    });
    const patch = { operation: 'patch', name: 'twin-delivered', expectedRevision: 1, skillMd: skillMd('twin-delivered', '# Twin') };
    twin = () => skills.manage(trustedContext(tenant, 'inv-twin-patch'), patch);
    expect(await lagging.manage(trustedContext(tenant, 'inv-twin-patch'), patch)).toMatchObject({
      status: 'installed',
      revision: 2,
      replayed: true,
    });
    const rows = await database.pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM skill_revisions WHERE tenant_id = $1 AND name = 'twin-delivered'`,
      [tenant],
    );
    expect(Number(rows.rows[0]!.count)).toBe(2);
    // Archiving the later revision leaves the earlier active (a revision conflict for the lagging
    // read); archiving a skill's only revision leaves none (SkillNotFound): both are the twin's.
    for (const [name, expectedRevision] of [
      ['twin-delivered', 2],
      ['twin-single', 1],
    ] as const) {
      if (name === 'twin-single') await skills.manage(trustedContext(tenant, 'inv-twin-single'), createRequest(name));
      const archive = { operation: 'archive', name, expectedRevision };
      twin = () => skills.manage(trustedContext(tenant, `inv-twin-archive-${name}`), archive);
      expect(await lagging.manage(trustedContext(tenant, `inv-twin-archive-${name}`), archive)).toMatchObject({ replayed: true });
    }
  });

  it('refuses the same invocation id with different arguments, naming the reuse, and writes nothing', async () => {
    const before = await countSkillRows(database.pool, tenant);
    await expect(
      skills.manage(trustedContext(tenant, 'inv-idem-1'), {
        operation: 'patch',
        name: 'retried',
        expectedRevision: 1,
        skillMd: skillMd('retried', '# A different edit'),
      }),
    ).rejects.toBeInstanceOf(SkillManageInvocationReused);
    expect(await countSkillRows(database.pool, tenant)).toEqual(before);
  });

  it('never deduplicates two different invocations, even with identical arguments', async () => {
    const patch = { operation: 'patch', name: 'retried', expectedRevision: 1, skillMd: skillMd('retried', '# Same words') };
    const first = await skills.manage(trustedContext(tenant, 'inv-idem-2'), patch);
    expect(first).toMatchObject({ status: 'installed', revision: 2, replayed: false });
    await expect(skills.manage(trustedContext(tenant, 'inv-idem-3'), patch)).rejects.toBeInstanceOf(SkillRevisionConflict);
    const second = await skills.manage(trustedContext(tenant, 'inv-idem-3b'), { ...patch, expectedRevision: 2 });
    expect(second).toMatchObject({ status: 'installed', revision: 3, replayed: false });
  });

  it('replays an archive retried by the same invocation', async () => {
    const archive = { operation: 'archive', name: 'retried', expectedRevision: 3 };
    const first = await skills.manage(trustedContext(tenant, 'inv-idem-archive'), archive);
    const again = await skills.manage(trustedContext(tenant, 'inv-idem-archive'), archive);
    expect(first).toEqual({ status: 'archived', operation: 'archive', name: 'retried', revision: 3, replayed: false });
    expect(again).toEqual({ ...first, replayed: true });
    expect((await repository.resolve(tenant, 'retried')).revision).toBe(2);
  });
});

describe('skill_manage source rules', () => {
  const tenant = 't-source';

  beforeAll(async () => {
    await repository.install(tenant, skillPackage({ name: 'operator-owned' }), { source: 'operator' });
    await repository.install(tenant, skillPackage({ name: 'builtin-owned' }), { source: 'builtin' });
  });

  it.each([
    ['edit', 'operator-owned'],
    ['patch', 'operator-owned'],
    ['archive', 'operator-owned'],
    ['edit', 'builtin-owned'],
    ['patch', 'builtin-owned'],
    ['archive', 'builtin-owned'],
  ])('denies %s of %s with source as the reason', async (operation, name) => {
    const request =
      operation === 'edit'
        ? { operation, name, expectedRevision: 1, package: createRequest(name).package }
        : operation === 'patch'
          ? { operation, name, expectedRevision: 1, skillMd: skillMd(name, '# Taken over') }
          : { operation, name, expectedRevision: 1 };
    const detail = await expectDenied(trustedContext(tenant, `inv-source-${operation}-${name}`), request, 'source', /source/);
    expect(detail).toMatchObject({ source: name.split('-')[0] });
  });

  it('denies a create over an operator skill name with source as the reason', async () => {
    await expectDenied(trustedContext(tenant, 'inv-source-create'), createRequest('operator-owned'), 'source', /source operator/);
  });

  it('denies a create over an archived operator skill whose identity remains, with source as the reason', async () => {
    await repository.install(tenant, skillPackage({ name: 'retired-operator' }), { source: 'operator' });
    await repository.archive(tenant, 'retired-operator', 1);
    await expectDenied(trustedContext(tenant, 'inv-source-retired'), createRequest('retired-operator'), 'source', /source operator/);
  });

  it('always allows create of a new name, and refuses a second create of an active agent skill', async () => {
    await expect(skills.manage(trustedContext(tenant, 'inv-source-new'), createRequest('agent-owned'))).resolves.toMatchObject({
      status: 'installed',
      revision: 1,
    });
    await expect(skills.manage(trustedContext(tenant, 'inv-source-dup'), createRequest('agent-owned'))).rejects.toBeInstanceOf(
      SkillNameNotUnique,
    );
  });

  it('cannot reach an MCP skill: none is ever stored, so skill_manage finds nothing to write', async () => {
    await expect(
      skills.manage(trustedContext(tenant, 'inv-source-mcp'), {
        operation: 'patch',
        name: 'mcp-prompt',
        expectedRevision: 1,
        skillMd: skillMd('mcp-prompt', '# x'),
      }),
    ).rejects.toBeInstanceOf(SkillNotFound);
    expect((await countSkillRows(database.pool, tenant)).revisions).toBe(4);
  });
});

describe('skill_manage patch', () => {
  it('replaces SKILL.md only and carries every other member forward byte for byte', async () => {
    const tenant = 't-patch';
    const binary = new Uint8Array([0, 1, 2, 250, 255]);
    await skills.manage(trustedContext(tenant, 'inv-patch-create'), {
      operation: 'create',
      name: 'carried',
      package: {
        files: {
          ...createRequest('carried').package.files,
          'references/guide.md': 'the guide',
          'assets/logo.bin': { base64: Buffer.from(binary).toString('base64') },
        },
      },
    });
    const patched = await skills.manage(trustedContext(tenant, 'inv-patch-1'), {
      operation: 'patch',
      name: 'carried',
      expectedRevision: 1,
      skillMd: skillMd('carried', '# Instructions\n\n1. Read the guide first.'),
    });
    expect(patched).toMatchObject({ status: 'installed', operation: 'patch', revision: 2 });
    const revision = await repository.resolve(tenant, 'carried@2');
    expect(revision.body).toBe('# Instructions\n\n1. Read the guide first.');
    expect(revision.manifest.version).toBe('1.1.0');
    const unpacked = await readPackageArchive(await repository.readArchive(tenant, revision), 'carried');
    expect([...unpacked.files.keys()].sort()).toEqual(['SKILL.md', 'assets/logo.bin', 'references/guide.md']);
    expect(decoder.decode(unpacked.files.get('references/guide.md'))).toBe('the guide');
    expect(unpacked.files.get('assets/logo.bin')).toEqual(binary);
  });
});

describe('gate.skill.review_confined (skill_manage rules)', () => {
  const tenant = 't-review';
  const review = (invocationId: string, loaded: Array<[string, number]>) =>
    trustedContext(tenant, invocationId, { runId: 'review-run-1', reviewRun: { loaded: new Map(loaded) } });

  beforeAll(async () => {
    await skills.manage(trustedContext(tenant, 'inv-review-seed'), createRequest('reviewed'));
    await skills.manage(trustedContext(tenant, 'inv-review-seed-2'), {
      operation: 'patch',
      name: 'reviewed',
      expectedRevision: 1,
      skillMd: skillMd('reviewed', '# Second'),
    });
    await repository.install(tenant, skillPackage({ name: 'platform-skill' }), { source: 'operator' });
  });

  it('denies edit of a skill the review has not loaded (read before write)', async () => {
    const detail = await expectDenied(
      review('inv-review-edit-unloaded', []),
      { operation: 'edit', name: 'reviewed', expectedRevision: 2, package: createRequest('reviewed', { body: '# x' }).package },
      'read_before_write',
      /only after loading its current revision 2 \(not loaded\)/,
    );
    expect(detail).toMatchObject({ loadedRevision: null, currentRevision: 2 });
  });

  it('denies patch of a skill the review loaded at an older revision (read before write)', async () => {
    const detail = await expectDenied(
      review('inv-review-patch-stale-load', [['reviewed', 1]]),
      { operation: 'patch', name: 'reviewed', expectedRevision: 2, skillMd: skillMd('reviewed', '# y') },
      'read_before_write',
      /loaded revision 1/,
    );
    expect(detail).toMatchObject({ loadedRevision: 1, currentRevision: 2 });
  });

  it('denies archive in a review even of a skill it loaded', async () => {
    await expectDenied(
      review('inv-review-archive', [['reviewed', 2]]),
      { operation: 'archive', name: 'reviewed', expectedRevision: 2 },
      'review_archive',
      /cannot archive/,
    );
  });

  it.each(['edit', 'patch'])('denies %s of a non-agent skill in a review, loaded or not, with source as the reason', async (operation) => {
    const request =
      operation === 'edit'
        ? { operation, name: 'platform-skill', expectedRevision: 1, package: createRequest('platform-skill').package }
        : { operation, name: 'platform-skill', expectedRevision: 1, skillMd: skillMd('platform-skill', '# z') };
    await expectDenied(review(`inv-review-source-${operation}`, [['platform-skill', 1]]), request, 'source', /source operator/);
  });

  it('allows patch of a skill loaded at its current revision, and create', async () => {
    await expect(
      skills.manage(review('inv-review-patch-ok', [['reviewed', 2]]), {
        operation: 'patch',
        name: 'reviewed',
        expectedRevision: 2,
        skillMd: skillMd('reviewed', '# Refined by review'),
      }),
    ).resolves.toMatchObject({ status: 'installed', revision: 3 });
    await expect(skills.manage(review('inv-review-create', []), createRequest('review-born'))).resolves.toMatchObject({
      status: 'installed',
      revision: 1,
    });
  });
});

describe('skill_manage rollout control', () => {
  it('refuses with SkillAuthoringDisabled when foreground authoring is off, writing nothing', async () => {
    const disabled = createSkillManage({
      pool: database.pool,
      repository,
      defaultLicense: 'Apache-2.0',
      settings: { enabled: false, approvalProfile: 'none' },
      activation: services.rollout,
    });
    await expect(disabled.manage(trustedContext('t-disabled', 'inv-disabled'), createRequest('never'))).rejects.toBeInstanceOf(
      SkillAuthoringDisabled,
    );
    expect(await countSkillRows(database.pool, 't-disabled')).toEqual({ skills: 0, revisions: 0, packages: 0 });
    expect(await listSkillEvents(database.pool, 't-disabled')).toEqual([]);
  });
});

describe('skill_manage archive', () => {
  it('archives only the current revision; a stale expectedRevision is a conflict and archives nothing', async () => {
    const tenant = 't-archive';
    await skills.manage(trustedContext(tenant, 'inv-archive-create'), createRequest('archivable'));
    await skills.manage(trustedContext(tenant, 'inv-archive-patch'), {
      operation: 'patch',
      name: 'archivable',
      expectedRevision: 1,
      skillMd: skillMd('archivable', '# Two'),
    });
    await expect(
      skills.manage(trustedContext(tenant, 'inv-archive-stale'), { operation: 'archive', name: 'archivable', expectedRevision: 1 }),
    ).rejects.toBeInstanceOf(SkillRevisionConflict);
    expect((await repository.resolve(tenant, 'archivable@1')).status).toBe('active');
    const archived = await skills.manage(trustedContext(tenant, 'inv-archive-ok'), {
      operation: 'archive',
      name: 'archivable',
      expectedRevision: 2,
    });
    expect(archived).toMatchObject({ status: 'archived', revision: 2 });
    const row = await repository.resolve(tenant, 'archivable@2');
    expect(row).toMatchObject({ status: 'archived', archivedByInvocationId: 'inv-archive-ok' });
    expect(row.archiveIdempotencyKey).toMatch(/^inv-archive-ok:[0-9a-f]{64}$/);
    // The newest number handed out is 2, so the next edit expects 2 and writes 3.
    const edited = await skills.manage(trustedContext(tenant, 'inv-archive-after'), {
      operation: 'patch',
      name: 'archivable',
      expectedRevision: 2,
      skillMd: skillMd('archivable', '# Three'),
    });
    expect(edited).toMatchObject({ status: 'installed', revision: 3 });
  });
});

// Last in the file: it reads every agent revision the tests above wrote.
describe('gate.skill.provenance_complete', () => {
  it.each(['runId', 'principalId', 'invocationId', 'idempotencyKey'] as const)(
    'structural: the only insert path refuses an agent revision without %s',
    async (field) => {
      const authoredBy = { runId: 'r', principalId: 'p', invocationId: `inv-structural-${field}`, idempotencyKey: 'k' };
      const { [field]: _omitted, ...incomplete } = authoredBy;
      await expect(
        repository.install('t-structural', skillPackage({ name: 'no-provenance' }), {
          source: 'agent',
          authoredBy: incomplete as typeof authoredBy,
        }),
      ).rejects.toBeInstanceOf(SkillProvenanceInvalid);
      expect(await revisionCount('t-structural')).toBe(0);
    },
  );

  it('structural: the table refuses partial provenance (all-or-nothing CHECK)', async () => {
    const constraints = await database.pool.query<{ definition: string }>(
      `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
       WHERE conrelid = 'skill_revisions'::regclass AND contype = 'c'`,
    );
    const provenance = constraints.rows.find((row) => row.definition.includes('authored_by_principal_id'));
    expect(provenance?.definition).toMatch(/authored_by_invocation_id IS NOT NULL/);
    expect(provenance?.definition).toMatch(/authoring_idempotency_key IS NOT NULL/);
  });

  it('query: every agent revision carries principal, invocation, idempotency key and a run id that resolves to the event log', async () => {
    const agentRevisions = await database.pool.query<{
      tenant_id: string;
      authored_by_run_id: string | null;
      authored_by_principal_id: string | null;
      authored_by_invocation_id: string | null;
      authoring_idempotency_key: string | null;
    }>(
      `SELECT r.tenant_id, r.authored_by_run_id, r.authored_by_principal_id, r.authored_by_invocation_id, r.authoring_idempotency_key
       FROM skill_revisions r JOIN skills s ON s.tenant_id = r.tenant_id AND s.id = r.skill_id
       WHERE s.source = 'agent'`,
    );
    expect(agentRevisions.rows.length).toBeGreaterThan(15);
    for (const row of agentRevisions.rows) {
      expect(row.authored_by_principal_id).toBe('principal-ada');
      expect(row.authored_by_invocation_id).not.toBeNull();
      expect(row.authored_by_run_id).not.toBeNull();
      expect(row.authoring_idempotency_key).toMatch(new RegExp(`^${row.authored_by_invocation_id}:[0-9a-f]{64}$`));
      const events = await listSkillEvents(database.pool, row.tenant_id, { invocationId: row.authored_by_invocation_id! });
      expect(events.some((event) => event.kind.startsWith('authoring.') && event.runId === row.authored_by_run_id)).toBe(true);
    }
    const incomplete = await database.pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM skill_revisions r JOIN skills s ON s.tenant_id = r.tenant_id AND s.id = r.skill_id
       WHERE s.source = 'agent' AND (r.authored_by_principal_id IS NULL OR r.authored_by_invocation_id IS NULL
         OR r.authoring_idempotency_key IS NULL OR r.authored_by_run_id IS NULL)`,
    );
    expect(Number(incomplete.rows[0]!.count)).toBe(0);
  });
});
