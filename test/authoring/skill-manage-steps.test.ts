import { describe, expect, it } from 'vitest';
import { approvalAuthoredBy, closedOutcome, installedEvent, installedOutcome } from '../../src/authoring/approval-outcome.ts';
import { SkillAuthoringDenied, SkillManageInvocationReused, SkillManageRequestInvalid } from '../../src/authoring/authoring-errors.ts';
import { appliedEventKind, parseManageInvocation, type ManageInvocation } from '../../src/authoring/skill-manage-contract.ts';
import { checkInstalledByInvocation, mayHaveRacedItself, replayOf } from '../../src/authoring/skill-manage-idempotency.ts';
import { currentStateDenial, policyDenial, revisionConflict } from '../../src/authoring/skill-manage-policy.ts';
import { SkillNotFound, SkillRevisionConflict } from '../../src/skills/skill-errors.ts';
import type { SkillRevision, SkillSource } from '../../src/skills/skill-revision.ts';
import { SkillNameNotUnique } from '../../src/skills/validation-errors.ts';
import type { Approval, ApprovalStatus } from '../../src/authoring/approval.ts';
import type { SkillManageInvocation } from '../../src/authoring/skill-manage-invocation-repository.ts';
import { createRequest, trustedContext } from './authoring-fixtures.ts';
import { manifest } from '../skills/skill-fixtures.ts';

/** The pure steps of skill_manage and of approving, each on its own (the DB steps are in skill-manage-steps.store.test.ts). */
const edit = (name: string, expectedRevision: number) => ({
  operation: 'patch' as const,
  name,
  expectedRevision,
  skillMd: `---\nname: ${name}\n---\nbody`,
});

function invocation(context = trustedContext('t', 'inv-1'), request: unknown = createRequest('deploy')): ManageInvocation {
  return parseManageInvocation(context, request);
}

function revision(name: string, number: number, source: SkillSource = 'agent', idempotencyKey = 'inv-1:abc'): SkillRevision {
  return {
    id: `id-${number}`,
    skillId: 'skill-1',
    tenantId: 't',
    name,
    revision: number,
    manifest: manifest({ name }),
    body: 'body',
    bodyTokens: 1,
    contentSha256: 'f'.repeat(64),
    packageKey: `t/skill-1/${number}`,
    packageBytes: 10,
    fileCount: 1,
    source,
    trust: source === 'agent' ? 'external_untrusted' : 'trusted_configuration',
    status: 'active',
    authoredBy: source === 'agent' ? { runId: 'run', principalId: 'p', invocationId: 'inv-1', idempotencyKey } : null,
    archivedByInvocationId: null,
    archiveIdempotencyKey: null,
    createdAt: new Date(0),
  };
}

describe('parseManageInvocation', () => {
  it('keys an invocation by its id and the canonical hash of its arguments, whatever their key order', () => {
    const request = createRequest('deploy');
    const reordered = { package: request.package, name: request.name, operation: request.operation };
    const first = invocation(trustedContext('t', 'inv-1'), request);
    expect(first.idempotencyKey).toBe(`inv-1:${first.argumentSha256}`);
    expect(invocation(trustedContext('t', 'inv-1'), reordered).argumentSha256).toBe(first.argumentSha256);
    expect(invocation(trustedContext('t', 'inv-1'), createRequest('other')).argumentSha256).not.toBe(first.argumentSha256);
  });

  it('names the offending path of an invalid context or request', () => {
    expect(() => invocation(trustedContext('t', 'inv-1', { scopes: 'skill.write' as unknown as string[] }))).toThrow(
      SkillManageRequestInvalid,
    );
    expect(() => invocation(undefined, { operation: 'edit', name: 'x', expectedRevision: 0, package: { files: {} } })).toThrow(
      /expectedRevision/,
    );
  });
});

describe('policyDenial', () => {
  it('allows a trusted principal holding skill.write', () => {
    const { context, request } = invocation();
    expect(policyDenial(context, request)).toBeUndefined();
  });

  it('requires the exact scope skill.write, then origin trust user, then no archive from a review', () => {
    const request = invocation().request;
    expect(policyDenial(invocation(trustedContext('t', 'i', { scopes: ['skill.write.all'] })).context, request)?.reason).toBe('scope');
    const tainted = invocation(trustedContext('t', 'i', { originTrust: 'untrusted', taint: 'read a web page' })).context;
    expect(policyDenial(tainted, request)).toMatchObject({ reason: 'origin_trust', detail: { taint: 'read a web page' } });
    const review = invocation(trustedContext('t', 'i', { reviewRun: { loaded: new Map() } }), {
      operation: 'archive',
      name: 'x',
      expectedRevision: 1,
    });
    expect(policyDenial(review.context, review.request)?.reason).toBe('review_archive');
    expect(policyDenial(invocation(trustedContext('t', 'i', { originTrust: 'operator' })).context, request)).toBeUndefined();
  });
});

describe('currentStateDenial', () => {
  const { context } = invocation();

  it('lets create take a free name and refuses a taken one: another source is denied, an agent skill is not unique', () => {
    const create = createRequest('deploy');
    expect(currentStateDenial(context, create, undefined)).toBeUndefined();
    expect(currentStateDenial(context, create, revision('deploy', 1, 'operator'))).toMatchObject({
      reason: 'source',
      detail: { source: 'operator' },
    });
    expect(() => currentStateDenial(context, create, revision('deploy', 2))).toThrow(SkillNameNotUnique);
  });

  it('refuses edit, patch and archive of a name without an active revision, and of a skill not authored by agents', () => {
    expect(() => currentStateDenial(context, edit('deploy', 1), undefined)).toThrow(SkillNotFound);
    expect(currentStateDenial(context, edit('deploy', 1), revision('deploy', 1, 'builtin'))?.reason).toBe('source');
    expect(currentStateDenial(context, edit('deploy', 1), revision('deploy', 1))).toBeUndefined();
  });

  it('lets a review change only a skill it loaded at the current revision', () => {
    const review = (loaded: Map<string, number>) => invocation(trustedContext('t', 'i', { reviewRun: { loaded } })).context;
    expect(currentStateDenial(review(new Map([['deploy', 3]])), edit('deploy', 3), revision('deploy', 3))).toBeUndefined();
    expect(currentStateDenial(review(new Map([['deploy', 2]])), edit('deploy', 3), revision('deploy', 3))).toMatchObject({
      reason: 'read_before_write',
      detail: { loadedRevision: 2, currentRevision: 3 },
    });
    expect(currentStateDenial(review(new Map()), edit('deploy', 3), revision('deploy', 3))?.message).toMatch(/not loaded/);
  });
});

describe('revisionConflict', () => {
  it('passes the revision a request expects and reports any other with the current one', () => {
    expect(revisionConflict(edit('deploy', 4), 4)).toBeUndefined();
    expect(revisionConflict(edit('deploy', 3), 4)).toEqual({ expectedRevision: 3, currentRevision: 4 });
    expect(revisionConflict({ operation: 'archive', name: 'deploy', expectedRevision: 2 }, 1)).toEqual({
      expectedRevision: 2,
      currentRevision: 1,
    });
  });

  it('leaves a create to the store, which checks that no active revision exists', () => {
    expect(revisionConflict(createRequest('deploy'), 7)).toBeUndefined();
  });
});

describe('idempotency steps', () => {
  const current = invocation();
  const recorded = (argumentSha256: string): SkillManageInvocation => ({
    tenantId: 't',
    invocationId: 'inv-1',
    argumentSha256,
    operation: 'create',
    skillName: 'deploy',
    result: { status: 'installed', operation: 'create', name: 'deploy', revision: 1, contentSha256: 'f'.repeat(64) },
    createdAt: new Date(0),
    updatedAt: new Date(0),
  });

  it('replays the recorded outcome of the same arguments and refuses other arguments', () => {
    expect(replayOf(recorded(current.argumentSha256), current)).toEqual({
      status: 'installed',
      operation: 'create',
      name: 'deploy',
      revision: 1,
      contentSha256: 'f'.repeat(64),
      replayed: true,
    });
    expect(() => replayOf(recorded('0'.repeat(64)), current)).toThrow(SkillManageInvocationReused);
  });

  it('accepts a revision this invocation wrote and refuses one its id wrote with other arguments', () => {
    expect(() => checkInstalledByInvocation(revision('deploy', 1, 'agent', current.idempotencyKey), current)).not.toThrow();
    const reused = (() => {
      try {
        checkInstalledByInvocation(revision('deploy', 1, 'agent', `inv-1:${'0'.repeat(64)}`), current);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(reused).toBeInstanceOf(SkillManageInvocationReused);
    expect((reused as SkillManageInvocationReused).recordedArgumentSha256).toBe('0'.repeat(64));
  });

  it('suspects a lost race with itself only on uniqueness and compare-and-swap refusals', () => {
    expect(mayHaveRacedItself({ code: '23505' })).toBe(true);
    expect(mayHaveRacedItself(new SkillRevisionConflict('deploy', 1, 2))).toBe(true);
    expect(mayHaveRacedItself(new SkillNameNotUnique('deploy', 1))).toBe(true);
    expect(mayHaveRacedItself(new SkillAuthoringDenied('scope', 'no'))).toBe(false);
    expect(mayHaveRacedItself(null)).toBe(false);
  });
});

describe('appliedEventKind', () => {
  it('names the event of each applied operation in the past tense', () => {
    expect(['create', 'edit', 'patch', 'archive'].map((operation) => appliedEventKind(operation as 'create'))).toEqual([
      'authoring.created',
      'authoring.edited',
      'authoring.patched',
      'authoring.archived',
    ]);
  });
});

describe('approval outcomes', () => {
  const approval = (status: ApprovalStatus, operation: Approval['operation'] = 'edit'): Approval => ({
    tenantId: 't',
    id: '00000000-0000-0000-0000-000000000001',
    kind: 'SKILL_AUTHORING',
    status,
    operation,
    skillName: 'deploy',
    currentRevision: 1,
    proposedRevision: 2,
    packageSha256: 'a'.repeat(64),
    diff: '',
    memberChanges: { added: [], removed: [], changed: ['SKILL.md'], unchanged: [] },
    requestedByPrincipalId: 'principal-ada',
    requestedByRunId: 'run-1',
    toolInvocationId: 'inv-1',
    idempotencyKey: 'inv-1:abc',
    createdAt: new Date(0),
    resolvedAt: null,
    resolvedBy: null,
    resolutionReason: null,
    installedRevision: null,
    latencyMs: null,
  });

  it('installs with the requesting invocation as the author, not the approver', () => {
    expect(approvalAuthoredBy(approval('pending'))).toEqual({
      runId: 'run-1',
      principalId: 'principal-ada',
      invocationId: 'inv-1',
      idempotencyKey: 'inv-1:abc',
    });
  });

  it('closes the invocation only for an approval resolved without an install', () => {
    expect(closedOutcome(approval('pending'))).toBeUndefined();
    expect(closedOutcome(approval('approved'))).toBeUndefined();
    for (const status of ['rejected', 'expired', 'conflicted'] as const) {
      expect(closedOutcome(approval(status))).toEqual({ status, operation: 'edit', name: 'deploy', approvalId: approval(status).id });
    }
  });

  it('records an approved install with the same outcome and event kind as a direct one', () => {
    const installed = revision('deploy', 2);
    expect(installedOutcome(approval('approved', 'patch'), installed)).toEqual({
      status: 'installed',
      operation: 'patch',
      name: 'deploy',
      revision: 2,
      contentSha256: installed.contentSha256,
    });
    expect(installedEvent(approval('approved', 'create'), installed)).toMatchObject({
      kind: 'authoring.created',
      invocationId: 'inv-1',
      revision: 2,
      detail: { approvalId: approval('approved').id, principalId: 'principal-ada' },
    });
  });
});
