import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import type { Approval, ApprovalOperation, ApprovalStatus, MemberChanges } from './approval.ts';

/**
 * ApprovalRepository: the only module with SQL for `approvals`. A SKILL_AUTHORING approval
 * holds the package a skill_manage call would install, the diff a reviewer reads, and the
 * revision it was proposed against. Status moves once, from pending to one of
 * approved | rejected | expired | conflicted; every transition is a guarded UPDATE.
 */
export type NewApproval = Pick<
  Approval,
  | 'operation'
  | 'skillName'
  | 'currentRevision'
  | 'proposedRevision'
  | 'packageSha256'
  | 'diff'
  | 'memberChanges'
  | 'requestedByPrincipalId'
  | 'requestedByRunId'
  | 'toolInvocationId'
  | 'idempotencyKey'
> & { packageArchive: Uint8Array };

interface ApprovalRow {
  tenant_id: string;
  id: string;
  kind: 'SKILL_AUTHORING';
  status: ApprovalStatus;
  operation: ApprovalOperation;
  skill_name: string;
  current_revision: number;
  proposed_revision: number;
  package_sha256: string;
  diff: string;
  member_changes: MemberChanges;
  requested_by_principal_id: string;
  requested_by_run_id: string;
  tool_invocation_id: string;
  idempotency_key: string;
  created_at: Date;
  resolved_at: Date | null;
  resolved_by: string | null;
  resolution_reason: string | null;
  installed_revision: number | null;
}

const APPROVAL_COLUMNS = `tenant_id, id::text AS id, kind, status, operation, skill_name, current_revision,
  proposed_revision, package_sha256, diff, member_changes, requested_by_principal_id, requested_by_run_id,
  tool_invocation_id, idempotency_key, created_at, resolved_at, resolved_by, resolution_reason, installed_revision`;

function toApproval(row: ApprovalRow): Approval {
  const latencyMs = row.resolved_at === null ? null : row.resolved_at.getTime() - row.created_at.getTime();
  return { ...mapRow(row), latencyMs };
}

export async function insertApproval(db: Queryable, tenantId: string, approval: NewApproval): Promise<Approval> {
  const result = await db.query<ApprovalRow>(
    `INSERT INTO approvals (tenant_id, kind, status, operation, skill_name, current_revision, proposed_revision,
       package_archive, package_sha256, diff, member_changes, requested_by_principal_id, requested_by_run_id,
       tool_invocation_id, idempotency_key)
     VALUES ($1, 'SKILL_AUTHORING', 'pending', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     RETURNING ${APPROVAL_COLUMNS}`,
    [
      tenantId,
      approval.operation,
      approval.skillName,
      approval.currentRevision,
      approval.proposedRevision,
      Buffer.from(approval.packageArchive),
      approval.packageSha256,
      approval.diff,
      JSON.stringify(approval.memberChanges),
      approval.requestedByPrincipalId,
      approval.requestedByRunId,
      approval.toolInvocationId,
      approval.idempotencyKey,
    ],
  );
  return toApproval(result.rows[0]!);
}

export async function findApproval(db: Queryable, tenantId: string, id: string): Promise<Approval | undefined> {
  const result = await db.query<ApprovalRow>(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  const row = result.rows[0];
  return row ? toApproval(row) : undefined;
}

/** The stored package archive of an approval. */
export async function findApprovalPackage(db: Queryable, tenantId: string, id: string): Promise<Uint8Array | undefined> {
  const result = await db.query<{ package_archive: Buffer }>(`SELECT package_archive FROM approvals WHERE tenant_id = $1 AND id = $2`, [
    tenantId,
    id,
  ]);
  const row = result.rows[0];
  return row ? new Uint8Array(row.package_archive) : undefined;
}

export async function listApprovals(
  db: Queryable,
  tenantId: string,
  filter: { status?: ApprovalStatus; limit?: number } = {},
): Promise<Approval[]> {
  const result = await db.query<ApprovalRow>(
    `SELECT ${APPROVAL_COLUMNS} FROM approvals
     WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
     ORDER BY created_at, id LIMIT $3`,
    [tenantId, filter.status ?? null, filter.limit ?? 1000],
  );
  return result.rows.map(toApproval);
}

export interface ApprovalResolution {
  status: Exclude<ApprovalStatus, 'pending'>;
  resolvedBy: string;
  reason?: string | null;
  installedRevision?: number | null;
}

/**
 * Move a pending approval to its final status. Returns null when it was not pending any
 * more (resolved concurrently), so the caller can roll back whatever it did alongside.
 */
export async function resolveApproval(
  db: Queryable,
  tenantId: string,
  id: string,
  resolution: ApprovalResolution,
): Promise<Approval | undefined> {
  const result = await db.query<ApprovalRow>(
    `UPDATE approvals
     SET status = $3, resolved_at = now(), resolved_by = $4, resolution_reason = $5, installed_revision = $6
     WHERE tenant_id = $1 AND id = $2 AND status = 'pending'
     RETURNING ${APPROVAL_COLUMNS}`,
    [tenantId, id, resolution.status, resolution.resolvedBy, resolution.reason ?? null, resolution.installedRevision ?? null],
  );
  const row = result.rows[0];
  return row ? toApproval(row) : undefined;
}

/** Expire every pending approval created at or before `cutoff`; returns the expired ones. */
export async function expireApprovals(db: Queryable, tenantId: string, cutoff: Date, resolvedBy: string): Promise<Approval[]> {
  const result = await db.query<ApprovalRow>(
    `UPDATE approvals
     SET status = 'expired', resolved_at = now(), resolved_by = $3, resolution_reason = 'older than the approval TTL'
     WHERE tenant_id = $1 AND status = 'pending' AND created_at <= $2
     RETURNING ${APPROVAL_COLUMNS}`,
    [tenantId, cutoff, resolvedBy],
  );
  return result.rows.map(toApproval);
}

export interface ApprovalStatusSummary {
  status: ApprovalStatus;
  count: number;
  latencyP50Ms: number | null;
  latencyMaxMs: number | null;
}

/** Count and resolution latency (p50, max) per status for one tenant, or for every tenant (`null`). */
export async function summarizeApprovals(
  db: Queryable,
  tenantId: string | null,
): Promise<Array<ApprovalStatusSummary & { tenantId: string }>> {
  const result = await db.query<{ tenant_id: string; status: ApprovalStatus; count: string; p50: number | null; max: number | null }>(
    `SELECT tenant_id, status, count(*)::text AS count,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (resolved_at - created_at)) * 1000) AS p50,
       max(EXTRACT(EPOCH FROM (resolved_at - created_at)) * 1000) AS max
     FROM approvals WHERE ($1::text IS NULL OR tenant_id = $1) GROUP BY tenant_id, status ORDER BY tenant_id, status`,
    [tenantId],
  );
  return result.rows.map((row) => ({
    tenantId: row.tenant_id,
    status: row.status,
    count: Number(row.count),
    latencyP50Ms: row.p50 === null ? null : Math.round(Number(row.p50)),
    latencyMaxMs: row.max === null ? null : Math.round(Number(row.max)),
  }));
}
