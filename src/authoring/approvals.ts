import type pg from 'pg';
import { readPackageArchive } from '../skills/package-archive.ts';
import { SkillRevisionConflict, SkillSourceImmutable } from '../skills/skill-errors.ts';
import { SkillNameNotUnique } from '../skills/validation-errors.ts';
import {
  expireApprovals,
  findApproval,
  listApprovals,
  readApprovalPackage,
  resolveApproval,
  type Approval,
  type ApprovalResolution,
  type ApprovalStatus,
} from '../store/approval-repository.ts';
import { withTransaction } from '../store/database.ts';
import { recordSkillEvent } from '../store/skill-event-repository.ts';
import { updateSkillManageInvocationResult } from '../store/skill-manage-invocation-repository.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { ApprovalExpired, ApprovalNotFound, ApprovalNotPending } from './authoring-errors.ts';
import type { SkillManageOutcome } from './skill-manage.ts';

/**
 * The SKILL_AUTHORING approval queue: list, approve, reject, expire. Approving installs the
 * stored package through the repository — the same single writer, with compare-and-swap on
 * the revision the approval was raised against and the requesting invocation's provenance.
 * A conflict at approval time marks the approval `conflicted` and installs nothing. Every
 * transition is an `approval.resolved` event carrying the latency since the request.
 */
export interface ApprovalsDependencies {
  pool: pg.Pool;
  repository: SkillRepository;
  /** Pending approvals older than this expire (SKILLSMITH_APPROVAL_TTL_HOURS). */
  ttlHours: number;
}

export interface Approvals {
  list(tenantId: string, filter?: { status?: ApprovalStatus }): Promise<Approval[]>;
  show(tenantId: string, id: string): Promise<Approval>;
  /** Install the approved package; returns the approval as resolved (`approved` or `conflicted`). */
  approve(tenantId: string, id: string, options: { resolvedBy: string }): Promise<Approval>;
  reject(tenantId: string, id: string, options: { resolvedBy: string; reason?: string }): Promise<Approval>;
  /** Expire pending approvals created at or before `asOf − ttl` (default: now). */
  expire(tenantId: string, options?: { asOf?: Date }): Promise<Approval[]>;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EXPIRY_PRINCIPAL = 'system:approval-ttl';

export function createApprovals({ pool, repository, ttlHours }: ApprovalsDependencies): Approvals {
  const ttlMs = ttlHours * 3_600_000;

  async function load(tenantId: string, id: string): Promise<Approval> {
    if (!UUID_PATTERN.test(id)) throw new ApprovalNotFound(id);
    const approval = await findApproval(pool, tenantId, id);
    if (!approval) throw new ApprovalNotFound(id);
    return approval;
  }

  async function pending(tenantId: string, id: string): Promise<Approval> {
    const approval = await load(tenantId, id);
    if (approval.status !== 'pending') throw new ApprovalNotPending(id, approval.status);
    return approval;
  }

  function resolvedEvent(approval: Approval) {
    return {
      kind: 'approval.resolved',
      runId: approval.requestedByRunId,
      invocationId: approval.toolInvocationId,
      name: approval.skillName,
      revision: approval.installedRevision ?? approval.proposedRevision,
      reason: approval.status,
      detail: {
        approvalId: approval.id,
        status: approval.status,
        resolvedBy: approval.resolvedBy,
        latencyMs: approval.latencyMs,
        resolution: approval.resolutionReason,
      },
    };
  }

  /** What a retry of the requesting invocation replays once its approval closed without an install. */
  async function closeInvocation(client: pg.PoolClient, approval: Approval): Promise<void> {
    if (approval.status !== 'rejected' && approval.status !== 'expired' && approval.status !== 'conflicted') return;
    const outcome: SkillManageOutcome = {
      status: approval.status,
      operation: approval.operation,
      name: approval.skillName,
      approvalId: approval.id,
    };
    await updateSkillManageInvocationResult(client, approval.tenantId, approval.toolInvocationId, outcome);
  }

  /** Resolve without installing anything (reject, expire, conflict), with its event, in one transaction. */
  async function resolveOnly(tenantId: string, id: string, resolution: ApprovalResolution): Promise<Approval> {
    const resolved = await withTransaction(pool, async (client) => {
      const updated = await resolveApproval(client, tenantId, id, resolution);
      if (updated) {
        await recordSkillEvent(client, tenantId, resolvedEvent(updated));
        await closeInvocation(client, updated);
      }
      return updated;
    });
    if (!resolved) {
      const now = await load(tenantId, id);
      throw new ApprovalNotPending(id, now.status);
    }
    return resolved;
  }

  async function expire(tenantId: string, options: { asOf?: Date } = {}): Promise<Approval[]> {
    const asOf = options.asOf ?? new Date();
    return withTransaction(pool, async (client) => {
      const expired = await expireApprovals(client, tenantId, new Date(asOf.getTime() - ttlMs), EXPIRY_PRINCIPAL);
      for (const approval of expired) {
        await recordSkillEvent(client, tenantId, resolvedEvent(approval));
        await closeInvocation(client, approval);
      }
      return expired;
    });
  }

  async function approve(tenantId: string, id: string, options: { resolvedBy: string }): Promise<Approval> {
    const approval = await pending(tenantId, id);
    if (approval.createdAt.getTime() + ttlMs <= Date.now()) {
      await expire(tenantId);
      throw new ApprovalExpired(id, ttlHours);
    }
    const archiveBytes = await readApprovalPackage(pool, tenantId, id);
    if (!archiveBytes) throw new ApprovalNotFound(id);
    const skillPackage = await readPackageArchive(archiveBytes, approval.skillName);
    const outcome: { approved: Approval | null } = { approved: null };
    try {
      await repository.install(tenantId, skillPackage, {
        source: 'agent',
        expectedRevision: approval.currentRevision,
        authoredBy: {
          runId: approval.requestedByRunId,
          principalId: approval.requestedByPrincipalId,
          invocationId: approval.toolInvocationId,
          idempotencyKey: approval.idempotencyKey,
        },
        inTransaction: async (client, installed) => {
          const approved = await resolveApproval(client, tenantId, id, {
            status: 'approved',
            resolvedBy: options.resolvedBy,
            installedRevision: installed.revision,
          });
          // Resolved concurrently: roll the install back with it.
          if (!approved) throw new ApprovalNotPending(id, 'resolved concurrently');
          outcome.approved = approved;
          const result: SkillManageOutcome = {
            status: 'installed',
            operation: approval.operation,
            name: approval.skillName,
            revision: installed.revision,
            contentSha256: installed.contentSha256,
          };
          await updateSkillManageInvocationResult(client, tenantId, approval.toolInvocationId, result);
          await recordSkillEvent(client, tenantId, {
            kind: `authoring.${approval.operation === 'create' ? 'created' : approval.operation === 'edit' ? 'edited' : 'patched'}`,
            runId: approval.requestedByRunId,
            invocationId: approval.toolInvocationId,
            name: approval.skillName,
            revision: installed.revision,
            detail: {
              operation: approval.operation,
              principalId: approval.requestedByPrincipalId,
              approvalId: id,
              contentSha256: installed.contentSha256,
            },
          });
          await recordSkillEvent(client, tenantId, resolvedEvent(approved));
        },
      });
    } catch (error) {
      // Resolved concurrently (another approve, a reject, an expiry): report what it became.
      const now = await findApproval(pool, tenantId, id);
      if (error instanceof ApprovalNotPending || (now !== null && now.status !== 'pending')) {
        throw new ApprovalNotPending(id, now?.status ?? 'missing');
      }
      if (error instanceof SkillRevisionConflict || error instanceof SkillNameNotUnique || error instanceof SkillSourceImmutable) {
        const currentRevision = error instanceof SkillRevisionConflict ? error.currentRevision : null;
        await recordSkillEvent(pool, tenantId, {
          kind: 'authoring.conflict',
          runId: approval.requestedByRunId,
          invocationId: approval.toolInvocationId,
          name: approval.skillName,
          revision: currentRevision,
          reason: 'approval',
          detail: { approvalId: id, expectedRevision: approval.currentRevision, currentRevision, error: error.name },
        });
        return resolveOnly(tenantId, id, {
          status: 'conflicted',
          resolvedBy: options.resolvedBy,
          reason: error.message,
        });
      }
      throw error;
    }
    if (outcome.approved === null) {
      // The repository replayed a revision this invocation already wrote (a concurrent approve won).
      const now = await load(tenantId, id);
      throw new ApprovalNotPending(id, now.status === 'pending' ? 'already installed by its invocation' : now.status);
    }
    return outcome.approved;
  }

  return {
    list: (tenantId, filter = {}) => listApprovals(pool, tenantId, filter),
    show: load,
    approve,
    reject: (tenantId, id, options) =>
      pending(tenantId, id).then(() =>
        resolveOnly(tenantId, id, { status: 'rejected', resolvedBy: options.resolvedBy, reason: options.reason ?? null }),
      ),
    expire,
  };
}
