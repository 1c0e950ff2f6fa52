/**
 * A SKILL_AUTHORING approval: the package a skill_manage call would install, the diff a
 * reviewer reads and the revision it was proposed against. Its status moves once, from
 * pending to one of approved | rejected | expired | conflicted.
 */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'conflicted';
export type ApprovalOperation = 'create' | 'edit' | 'patch';

export interface MemberChanges {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
}

export interface Approval {
  tenantId: string;
  id: string;
  kind: 'SKILL_AUTHORING';
  status: ApprovalStatus;
  operation: ApprovalOperation;
  skillName: string;
  currentRevision: number;
  proposedRevision: number;
  packageSha256: string;
  diff: string;
  memberChanges: MemberChanges;
  requestedByPrincipalId: string;
  requestedByRunId: string;
  toolInvocationId: string;
  idempotencyKey: string;
  createdAt: Date;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  resolutionReason: string | null;
  installedRevision: number | null;
  /** resolved_at − created_at, in milliseconds; null while pending. */
  latencyMs: number | null;
}
