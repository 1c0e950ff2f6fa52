import type { AuthoringContext, SkillRevision } from '../skills/skill-revision.ts';
import type { Approval } from './approval.ts';
import type { SkillEventInput } from '../store/skill-event-repository.ts';
import { appliedEventKind, type SkillManageOutcome } from './skill-manage-contract.ts';

/**
 * What resolving an approval means for the skill_manage invocation that raised it: the outcome
 * a retry of that invocation replays, and the events an approved install records — the same
 * outcome and event kinds skill_manage records when it installs directly.
 */

/** The provenance an approved install records: the requesting invocation's, not the approver's. */
export function approvalAuthoredBy(approval: Approval): AuthoringContext {
  return {
    runId: approval.requestedByRunId,
    principalId: approval.requestedByPrincipalId,
    invocationId: approval.toolInvocationId,
    idempotencyKey: approval.idempotencyKey,
  };
}

/** The outcome of an approval closed without an install; undefined while it is pending or once approved. */
export function closedOutcome(approval: Approval): SkillManageOutcome | undefined {
  if (approval.status !== 'rejected' && approval.status !== 'expired' && approval.status !== 'conflicted') return undefined;
  return { status: approval.status, operation: approval.operation, name: approval.skillName, approvalId: approval.id };
}

export function installedOutcome(approval: Approval, installed: SkillRevision): SkillManageOutcome {
  return {
    status: 'installed',
    operation: approval.operation,
    name: approval.skillName,
    revision: installed.revision,
    contentSha256: installed.contentSha256,
  };
}

/** The `authoring.created|edited|patched` event of an approved install. */
export function installedEvent(approval: Approval, installed: SkillRevision): SkillEventInput {
  return {
    kind: appliedEventKind(approval.operation),
    runId: approval.requestedByRunId,
    invocationId: approval.toolInvocationId,
    name: approval.skillName,
    revision: installed.revision,
    detail: {
      operation: approval.operation,
      principalId: approval.requestedByPrincipalId,
      approvalId: approval.id,
      contentSha256: installed.contentSha256,
    },
  };
}

/** The `approval.resolved` event of any transition, with the latency since the request. */
export function resolvedEvent(approval: Approval): SkillEventInput {
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
