import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/app/services.ts';
import type { Approvals } from '../../src/authoring/approvals.ts';
import { ApprovalExpired, ApprovalNotFound, ApprovalNotPending, SkillAuthoringDenied } from '../../src/authoring/authoring-errors.ts';
import { createSkillManage, type SkillManage } from '../../src/authoring/skill-manage.ts';
import { type SkillManageResult } from '../../src/authoring/skill-manage-contract.ts';
import { SkillNotFound, SkillRevisionConflict } from '../../src/skills/skill-errors.ts';
import { findApproval, listApprovals } from '../../src/authoring/approval-repository.ts';
import { listSkillEvents, recordSkillEvent } from '../../src/store/skill-event-repository.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import { runSkillsmith } from '../support/cli.ts';
import { countSkillRows, type TestDatabase } from '../support/database.ts';
import { openTestServices } from '../support/test-services.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';
import { createRequest, skillMd, trustedContext } from './authoring-fixtures.ts';

let database: TestDatabase;
let repository: SkillRepository;
let skills: SkillManage;
let approvals: Approvals;
let services: Services;

beforeAll(async () => {
  ({ database, services } = await openTestServices(
    { enabled: true, approvalProfile: 'skill_authoring', approvalTtlHours: 72 },
    { activatedTenants: ['t-approve', 't-expire', 't-metrics'] },
  ));
  repository = services.skills;
  skills = services.skillManage;
  approvals = services.approvals;
});

afterAll(async () => {
  await database?.close();
});

function cli(args: string[]) {
  return runSkillsmith(args, { DATABASE_URL: database.url, SKILLSMITH_LOG_LEVEL: 'silent', NODE_NO_WARNINGS: '1' });
}

function pendingId(result: SkillManageResult): string {
  if (result.status !== 'pending_approval') throw new Error(`expected a pending approval, got ${result.status}`);
  return result.approvalId;
}

describe('SKILL_AUTHORING approvals, end to end through the CLI', () => {
  const tenant = 't-approve';
  let createApprovalId = '';
  let patchApprovalId = '';

  it('holds a create as a pending approval with the package and a diff, installing nothing', async () => {
    const result = await skills.manage(
      trustedContext(tenant, 'inv-approve-create'),
      createRequest('held-skill', { extraFiles: { 'references/guide.md': 'the guide' } }),
    );
    expect(result).toMatchObject({
      status: 'pending_approval',
      operation: 'create',
      name: 'held-skill',
      currentRevision: 0,
      proposedRevision: 1,
      replayed: false,
    });
    createApprovalId = pendingId(result);
    expect(await countSkillRows(database.pool, tenant)).toEqual({ skills: 0, revisions: 0, packages: 0 });
    const approval = await findApproval(database.pool, tenant, createApprovalId);
    expect(approval).toMatchObject({
      kind: 'SKILL_AUTHORING',
      status: 'pending',
      skillName: 'held-skill',
      currentRevision: 0,
      proposedRevision: 1,
      requestedByPrincipalId: 'principal-ada',
      requestedByRunId: 'run-of-inv-approve-create',
      toolInvocationId: 'inv-approve-create',
      memberChanges: { added: ['SKILL.md', 'references/guide.md'], removed: [], changed: [], unchanged: [] },
    });
    expect(approval?.diff).toContain('+++ held-skill@1/SKILL.md');
    expect(approval?.diff).toContain('+name: held-skill');
    const events = await listSkillEvents(database.pool, tenant, { invocationId: 'inv-approve-create' });
    expect(events.map((event) => event.kind)).toEqual(['approval.requested']);
  });

  it('replays the pending approval for a retried invocation instead of raising a second one', async () => {
    const again = await skills.manage(
      trustedContext(tenant, 'inv-approve-create'),
      createRequest('held-skill', { extraFiles: { 'references/guide.md': 'the guide' } }),
    );
    expect(again).toMatchObject({ status: 'pending_approval', approvalId: createApprovalId, replayed: true });
    expect(await listApprovals(database.pool, tenant)).toHaveLength(1);
  });

  it('lists the pending approval with `approvals list --json` and shows its diff', async () => {
    const listed = await cli(['approvals', 'list', '--tenant', tenant, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const body = JSON.parse(listed.stdout) as { approvals: Array<{ id: string; status: string; skillName: string }> };
    expect(body.approvals).toEqual([expect.objectContaining({ id: createApprovalId, status: 'pending', skillName: 'held-skill' })]);
    const shown = await cli(['approvals', 'show', createApprovalId, '--tenant', tenant]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('+name: held-skill');
    expect(shown.stdout).toContain('added [SKILL.md, references/guide.md]');
  });

  it('installs on `approvals approve ID --json` with the requester provenance, recording the transition and its latency', async () => {
    const approved = await cli(['approvals', 'approve', createApprovalId, '--tenant', tenant, '--by', 'reviewer-grace', '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    const body = JSON.parse(approved.stdout) as { status: string; installedRevision: number; resolvedBy: string; latencyMs: number };
    expect(body).toMatchObject({ status: 'approved', installedRevision: 1, resolvedBy: 'reviewer-grace' });
    expect(body.latencyMs).toBeGreaterThanOrEqual(0);
    const installed = await repository.resolve(tenant, 'held-skill');
    expect(installed).toMatchObject({ revision: 1, source: 'agent', fileCount: 2 });
    expect(installed.authoredBy).toMatchObject({
      runId: 'run-of-inv-approve-create',
      principalId: 'principal-ada',
      invocationId: 'inv-approve-create',
    });
    const resolved = await listSkillEvents(database.pool, tenant, { kind: 'approval.resolved' });
    expect(resolved).toHaveLength(1);
    expect(resolved[0]).toMatchObject({
      reason: 'approved',
      revision: 1,
      detail: { approvalId: createApprovalId, resolvedBy: 'reviewer-grace' },
    });
    expect(typeof resolved[0]!.detail.latencyMs).toBe('number');
    // A retry of the original invocation now replays the installed outcome.
    const retried = await skills.manage(
      trustedContext(tenant, 'inv-approve-create'),
      createRequest('held-skill', { extraFiles: { 'references/guide.md': 'the guide' } }),
    );
    expect(retried).toMatchObject({ status: 'installed', revision: 1, replayed: true });
  });

  it('refuses to approve the same approval twice', async () => {
    await expect(approvals.approve(tenant, createApprovalId, { resolvedBy: 'x' })).rejects.toBeInstanceOf(ApprovalNotPending);
    const again = await cli(['approvals', 'approve', createApprovalId, '--tenant', tenant, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ error: { code: 'ApprovalNotPending' } });
    expect((await countSkillRows(database.pool, tenant)).revisions).toBe(1);
  });

  it('raises a patch approval whose diff shows the SKILL.md change and the carried-forward members', async () => {
    const result = await skills.manage(trustedContext(tenant, 'inv-approve-patch'), {
      operation: 'patch',
      name: 'held-skill',
      expectedRevision: 1,
      skillMd: skillMd('held-skill', '# Instructions\n\n1. Read the guide.\n2. Then act.'),
    });
    patchApprovalId = pendingId(result);
    const approval = await approvals.show(tenant, patchApprovalId);
    expect(approval).toMatchObject({
      operation: 'patch',
      currentRevision: 1,
      proposedRevision: 2,
      memberChanges: { added: [], removed: [], changed: ['SKILL.md'], unchanged: ['references/guide.md'] },
    });
    expect(approval.diff).toContain('--- held-skill@1/SKILL.md');
    expect(approval.diff).toContain('+++ held-skill@2/SKILL.md');
    expect(approval.diff).toContain('-1. Read.');
    expect(approval.diff).toContain('+2. Then act.');
    expect(approval.diff).toContain('-  version: 1.0.0');
    expect(approval.diff).toContain('+  version: 1.1.0');
    expect((await countSkillRows(database.pool, tenant)).revisions).toBe(1);
  });

  it('marks a second approval raised against the same revision conflicted at approve time and installs nothing', async () => {
    const rival = await skills.manage(trustedContext(tenant, 'inv-approve-rival'), {
      operation: 'patch',
      name: 'held-skill',
      expectedRevision: 1,
      skillMd: skillMd('held-skill', '# Instructions\n\n1. RIVAL-SENTINEL.'),
    });
    const rivalId = pendingId(rival);
    const first = await approvals.approve(tenant, patchApprovalId, { resolvedBy: 'reviewer-grace' });
    expect(first).toMatchObject({ status: 'approved', installedRevision: 2 });

    const conflicted = await cli(['approvals', 'approve', rivalId, '--tenant', tenant, '--json']);
    expect(conflicted.code).toBe(1);
    const body = JSON.parse(conflicted.stdout) as { status: string; resolutionReason: string; installedRevision: number | null };
    expect(body).toMatchObject({ status: 'conflicted', installedRevision: null });
    await expect(
      skills.manage(trustedContext(tenant, 'inv-approve-rival'), {
        operation: 'patch',
        name: 'held-skill',
        expectedRevision: 1,
        skillMd: skillMd('held-skill', '# Instructions\n\n1. RIVAL-SENTINEL.'),
      }),
    ).resolves.toMatchObject({ status: 'conflicted', approvalId: rivalId, replayed: true });
    expect(body.resolutionReason).toMatch(/revision 2, expected revision 1/);
    expect((await countSkillRows(database.pool, tenant)).revisions).toBe(2);
    await expect(repository.resolve(tenant, 'held-skill@3')).rejects.toBeInstanceOf(SkillNotFound);
    const bodies = await database.pool.query<{ body: string }>(`SELECT body FROM skill_revisions WHERE tenant_id = $1`, [tenant]);
    expect(bodies.rows.some((row) => row.body.includes('RIVAL-SENTINEL'))).toBe(false);
    const conflicts = await listSkillEvents(database.pool, tenant, { kind: 'authoring.conflict' });
    expect(conflicts).toEqual([
      expect.objectContaining({
        invocationId: 'inv-approve-rival',
        reason: 'approval',
        detail: expect.objectContaining({ currentRevision: 2 }),
      }),
    ]);
  });

  it('installs once when the same approval is approved twice concurrently; the other approve is refused as not pending', async () => {
    const result = await skills.manage(trustedContext(tenant, 'inv-approve-twice'), {
      operation: 'edit',
      name: 'held-skill',
      expectedRevision: 2,
      package: createRequest('held-skill', { body: '# Edited in full', version: '2.0.0' }).package,
    });
    const id = pendingId(result);
    const outcomes = await Promise.allSettled([
      approvals.approve(tenant, id, { resolvedBy: 'reviewer-a' }),
      approvals.approve(tenant, id, { resolvedBy: 'reviewer-b' }),
    ]);
    const fulfilled = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const rejected = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toBeInstanceOf(ApprovalNotPending);
    expect((await approvals.show(tenant, id)).status).toBe('approved');
    expect((await repository.resolve(tenant, 'held-skill')).revision).toBe(3);
    expect((await countSkillRows(database.pool, tenant)).revisions).toBe(3);
    expect(await listSkillEvents(database.pool, tenant, { kind: 'authoring.conflict', invocationId: 'inv-approve-twice' })).toEqual([]);
  });

  it('refuses a stale request at request time with SkillRevisionConflict, raising no approval', async () => {
    const before = (await listApprovals(database.pool, tenant)).length;
    await expect(
      skills.manage(trustedContext(tenant, 'inv-approve-stale'), {
        operation: 'patch',
        name: 'held-skill',
        expectedRevision: 1,
        skillMd: skillMd('held-skill', '# Stale'),
      }),
    ).rejects.toBeInstanceOf(SkillRevisionConflict);
    expect(await listApprovals(database.pool, tenant)).toHaveLength(before);
  });

  it('rejects with `approvals reject ID`, installing nothing and recording the transition', async () => {
    const result = await skills.manage(trustedContext(tenant, 'inv-approve-reject'), {
      operation: 'patch',
      name: 'held-skill',
      expectedRevision: 3,
      skillMd: skillMd('held-skill', '# Rejected words'),
    });
    const id = pendingId(result);
    const rejected = await cli(['approvals', 'reject', id, '--tenant', tenant, '--reason', 'not useful', '--json']);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ status: 'rejected', resolutionReason: 'not useful', installedRevision: null });
    expect((await countSkillRows(database.pool, tenant)).revisions).toBe(3);
    const events = await listSkillEvents(database.pool, tenant, { invocationId: 'inv-approve-reject' });
    expect(events.map((event) => [event.kind, event.reason])).toEqual([
      ['approval.requested', null],
      ['approval.resolved', 'rejected'],
    ]);
    await expect(approvals.reject(tenant, id, { resolvedBy: 'x' })).rejects.toBeInstanceOf(ApprovalNotPending);
    // A retry of the requesting invocation learns the approval was rejected; it raises no new one.
    const retried = await skills.manage(trustedContext(tenant, 'inv-approve-reject'), {
      operation: 'patch',
      name: 'held-skill',
      expectedRevision: 3,
      skillMd: skillMd('held-skill', '# Rejected words'),
    });
    expect(retried).toEqual({ status: 'rejected', operation: 'patch', name: 'held-skill', approvalId: id, replayed: true });
  });

  it('fails an unknown approval id with ApprovalNotFound, in the library and the CLI', async () => {
    await expect(approvals.approve(tenant, '00000000-0000-4000-8000-000000000000', { resolvedBy: 'x' })).rejects.toBeInstanceOf(
      ApprovalNotFound,
    );
    await expect(approvals.show(tenant, 'not-a-uuid')).rejects.toBeInstanceOf(ApprovalNotFound);
    const missing = await cli(['approvals', 'approve', 'not-a-uuid', '--tenant', tenant, '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'ApprovalNotFound' } });
    // Tenants are apart: another tenant cannot see this tenant's approval.
    await expect(approvals.show('t-other', patchApprovalId)).rejects.toBeInstanceOf(ApprovalNotFound);
  });
});

describe('approval expiry', () => {
  const tenant = 't-expire';

  it('expires pending approvals older than the TTL, recording each transition', async () => {
    const result = await skills.manage(trustedContext(tenant, 'inv-expire-1'), createRequest('slow-review'));
    const id = pendingId(result);
    expect(await approvals.expire(tenant)).toEqual([]);
    const expired = await approvals.expire(tenant, { asOf: new Date(Date.now() + 73 * 3_600_000) });
    expect(expired.map((approval) => [approval.id, approval.status])).toEqual([[id, 'expired']]);
    await expect(approvals.approve(tenant, id, { resolvedBy: 'late' })).rejects.toBeInstanceOf(ApprovalNotPending);
    await expect(skills.manage(trustedContext(tenant, 'inv-expire-1'), createRequest('slow-review'))).resolves.toMatchObject({
      status: 'expired',
      approvalId: id,
      replayed: true,
    });
    const events = await listSkillEvents(database.pool, tenant, { kind: 'approval.resolved' });
    expect(events).toEqual([
      expect.objectContaining({ reason: 'expired', detail: expect.objectContaining({ resolvedBy: 'system:approval-ttl' }) }),
    ]);
    expect(await countSkillRows(database.pool, tenant)).toEqual({ skills: 0, revisions: 0, packages: 0 });
  });

  it('refuses to approve a pending approval past its TTL, marking it expired', async () => {
    const result = await skills.manage(trustedContext(tenant, 'inv-expire-2'), createRequest('stale-review'));
    const id = pendingId(result);
    await database.pool.query(`UPDATE approvals SET created_at = now() - interval '80 hours' WHERE tenant_id = $1 AND id = $2`, [
      tenant,
      id,
    ]);
    await expect(approvals.approve(tenant, id, { resolvedBy: 'late' })).rejects.toBeInstanceOf(ApprovalExpired);
    expect((await approvals.show(tenant, id)).status).toBe('expired');
    expect((await countSkillRows(database.pool, tenant)).revisions).toBe(0);
  });

  it('expires stale approvals when `approvals list` runs', async () => {
    const result = await skills.manage(trustedContext(tenant, 'inv-expire-3'), createRequest('listed-late'));
    const id = pendingId(result);
    await database.pool.query(`UPDATE approvals SET created_at = now() - interval '73 hours' WHERE tenant_id = $1 AND id = $2`, [
      tenant,
      id,
    ]);
    const listed = await cli(['approvals', 'list', '--tenant', tenant, '--status', 'expired', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const body = JSON.parse(listed.stdout) as { approvals: Array<{ id: string; status: string }> };
    expect(body.approvals.map((approval) => approval.id)).toContain(id);
  });
});

describe('skillsmith metrics', () => {
  const tenant = 't-metrics';

  it('prints denials by reason, conflicts, approvals by status with latency, and loads', async () => {
    const plain = createSkillManage({
      pool: database.pool,
      repository,
      defaultLicense: 'Apache-2.0',
      settings: { enabled: true, approvalProfile: 'none' },
      activation: services.rollout,
    });
    await plain.manage(trustedContext(tenant, 'inv-m-create'), createRequest('measured'));
    await repository.install(tenant, skillPackage({ name: 'platform' }), { source: 'operator' });
    const denials: Array<[string, Parameters<SkillManage['manage']>[0], unknown]> = [
      ['scope', trustedContext(tenant, 'inv-m-scope', { scopes: ['skills:write'] }), createRequest('x-one')],
      [
        'origin_trust',
        trustedContext(tenant, 'inv-m-trust', { originTrust: 'untrusted', taint: 'read a web page' }),
        createRequest('x-two'),
      ],
      ['source', trustedContext(tenant, 'inv-m-source'), { operation: 'archive', name: 'platform', expectedRevision: 1 }],
      [
        'read_before_write',
        trustedContext(tenant, 'inv-m-rbw', { reviewRun: { loaded: new Map() } }),
        { operation: 'patch', name: 'measured', expectedRevision: 1, skillMd: skillMd('measured', '# r') },
      ],
      [
        'review_archive',
        trustedContext(tenant, 'inv-m-review-archive', { reviewRun: { loaded: new Map([['measured', 1]]) } }),
        { operation: 'archive', name: 'measured', expectedRevision: 1 },
      ],
    ];
    for (const [reason, context, request] of denials) {
      const failure = await plain.manage(context, request).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SkillAuthoringDenied);
      expect((failure as SkillAuthoringDenied).reason).toBe(reason);
    }
    await expect(
      plain.manage(trustedContext(tenant, 'inv-m-conflict'), { operation: 'archive', name: 'measured', expectedRevision: 7 }),
    ).rejects.toBeInstanceOf(SkillRevisionConflict);
    const pending = await skills.manage(trustedContext(tenant, 'inv-m-approval'), createRequest('measured-two'));
    await approvals.approve(tenant, pendingId(pending), { resolvedBy: 'reviewer' });
    const rejected = await skills.manage(trustedContext(tenant, 'inv-m-approval-2'), createRequest('measured-three'));
    await approvals.reject(tenant, pendingId(rejected), { resolvedBy: 'reviewer' });
    await recordSkillEvent(database.pool, tenant, { kind: 'skill.load', sessionId: 's-1', name: 'measured', revision: 1 });
    await recordSkillEvent(database.pool, tenant, { kind: 'skill.load', sessionId: 's-2', name: 'measured', revision: 1 });

    const printed = await cli(['metrics', '--tenant', tenant, '--json']);
    expect(printed.code, printed.stderr).toBe(0);
    const metrics = JSON.parse(printed.stdout) as {
      denials: { total: number; byReason: Record<string, number> };
      conflicts: number;
      writes: Record<string, number>;
      approvals: Array<{ status: string; count: number; latencyP50Ms: number | null; latencyMaxMs: number | null }>;
      loads: { total: number; byName: Array<{ name: string; count: number }> };
    };
    expect(metrics.denials).toEqual({
      total: 5,
      byReason: { scope: 1, origin_trust: 1, source: 1, read_before_write: 1, review_archive: 1 },
    });
    expect(metrics.conflicts).toBe(1);
    expect(metrics.writes).toEqual({ created: 2, edited: 0, patched: 0, archived: 0 });
    expect(metrics.approvals.map((row) => [row.status, row.count])).toEqual([
      ['approved', 1],
      ['rejected', 1],
    ]);
    for (const row of metrics.approvals) {
      expect(row.latencyP50Ms).toBeGreaterThanOrEqual(0);
      expect(row.latencyMaxMs).toBeGreaterThanOrEqual(row.latencyP50Ms!);
    }
    expect(metrics.loads).toEqual({ total: 2, byName: [{ name: 'measured', count: 2 }] });

    const human = await cli(['metrics', '--tenant', tenant]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('authoring denials: 5');
    expect(human.stdout).toContain('origin_trust: 1');
    expect(human.stdout).toMatch(/approved: 1 \(latency p50 \d+/);
  });
});
