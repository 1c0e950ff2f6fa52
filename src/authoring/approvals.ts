import type pg from 'pg';
import { readPackageArchive } from '../skills/package-archive.ts';
import type { SkillPackage } from '../skills/skill-package.ts';
import { SkillRevisionConflict, SkillSourceImmutable } from '../skills/skill-errors.ts';
import { SkillNameNotUnique } from '../skills/validation-errors.ts';
import {
  expireApprovals,
  findApproval,
  listApprovals,
  findApprovalPackage,
  resolveApproval,
  type ApprovalResolution,
} from './approval-repository.ts';
import { type Approval, type ApprovalStatus } from './approval.ts';
import { withTransaction } from '../store/database.ts';
import { recordSkillEvent } from '../store/skill-event-repository.ts';
import { updateSkillManageInvocationResult } from './skill-manage-invocation-repository.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { ApprovalExpired, ApprovalNotFound, ApprovalNotPending } from './authoring-errors.ts';
import { approvalAuthoredBy, closedOutcome, installedEvent, installedOutcome, resolvedEvent } from './approval-outcome.ts';

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

  /** What a retry of the requesting invocation replays once its approval closed without an install. */
  async function closeInvocation(client: pg.PoolClient, approval: Approval): Promise<void> {
    const outcome = closedOutcome(approval);
    if (outcome) await updateSkillManageInvocationResult(client, approval.tenantId, approval.toolInvocationId, outcome);
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

  /** A pending approval still inside its TTL; an expired one is expired (with its events) and refused. */
  async function approvable(tenantId: string, id: string): Promise<Approval> {
    const approval = await pending(tenantId, id);
    if (approval.createdAt.getTime() + ttlMs <= Date.now()) {
      await expire(tenantId);
      throw new ApprovalExpired(id, ttlHours);
    }
    return approval;
  }

  async function approvedPackage(tenantId: string, approval: Approval): Promise<SkillPackage> {
    const archiveBytes = await findApprovalPackage(pool, tenantId, approval.id);
    if (!archiveBytes) throw new ApprovalNotFound(approval.id);
    return readPackageArchive(archiveBytes, approval.skillName);
  }

  /**
   * Install the approved package through the repository with the requesting invocation's
   * provenance and compare-and-swap; in the install's transaction, resolve the approval, the
   * invocation's replayable outcome and the events. Undefined when the repository replayed a
   * revision this invocation had already written (a concurrent approve won).
   */
  async function installApproved(approval: Approval, skillPackage: SkillPackage, resolvedBy: string): Promise<Approval | undefined> {
    const { tenantId, id } = approval;
    let approved: Approval | undefined;
    await repository.install(tenantId, skillPackage, {
      source: 'agent',
      expectedRevision: approval.currentRevision,
      authoredBy: approvalAuthoredBy(approval),
      inTransaction: async (client, installed) => {
        const resolved = await resolveApproval(client, tenantId, id, {
          status: 'approved',
          resolvedBy,
          installedRevision: installed.revision,
        });
        // Resolved concurrently: roll the install back with it.
        if (!resolved) throw new ApprovalNotPending(id, 'resolved concurrently');
        approved = resolved;
        await updateSkillManageInvocationResult(client, tenantId, approval.toolInvocationId, installedOutcome(approval, installed));
        await recordSkillEvent(client, tenantId, installedEvent(approval, installed));
        await recordSkillEvent(client, tenantId, resolvedEvent(resolved));
      },
    });
    return approved;
  }

  /** An install that failed: resolved concurrently is reported as such; a store conflict marks the approval conflicted. */
  async function resolveFailedInstall(approval: Approval, error: unknown, resolvedBy: string): Promise<Approval> {
    const { tenantId, id } = approval;
    const now = await findApproval(pool, tenantId, id);
    if (error instanceof ApprovalNotPending || (now !== undefined && now.status !== 'pending')) {
      throw new ApprovalNotPending(id, now?.status ?? 'missing');
    }
    if (!(error instanceof SkillRevisionConflict || error instanceof SkillNameNotUnique || error instanceof SkillSourceImmutable))
      throw error;
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
    return resolveOnly(tenantId, id, { status: 'conflicted', resolvedBy, reason: error.message });
  }

  async function approve(tenantId: string, id: string, options: { resolvedBy: string }): Promise<Approval> {
    const approval = await approvable(tenantId, id);
    const skillPackage = await approvedPackage(tenantId, approval);
    let approved: Approval | undefined;
    try {
      approved = await installApproved(approval, skillPackage, options.resolvedBy);
    } catch (error) {
      return resolveFailedInstall(approval, error, options.resolvedBy);
    }
    if (approved === undefined) {
      const now = await load(tenantId, id);
      throw new ApprovalNotPending(id, now.status === 'pending' ? 'already installed by its invocation' : now.status);
    }
    return approved;
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
