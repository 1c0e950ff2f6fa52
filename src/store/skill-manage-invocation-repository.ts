import type { Queryable } from './database.ts';

/**
 * SkillManageInvocationRepository: the only module with SQL for `skill_manage_invocations`,
 * skill_manage's idempotency record keyed by (tenant, invocation id) with the canonical
 * argument hash beside it. Rows are written in the same transaction as the effect they record.
 */
export interface SkillManageInvocation {
  tenantId: string;
  invocationId: string;
  argumentSha256: string;
  operation: string;
  skillName: string;
  result: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

interface InvocationRow {
  tenant_id: string;
  invocation_id: string;
  argument_sha256: string;
  operation: string;
  skill_name: string;
  result: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function toInvocation(row: InvocationRow): SkillManageInvocation {
  return {
    tenantId: row.tenant_id,
    invocationId: row.invocation_id,
    argumentSha256: row.argument_sha256,
    operation: row.operation,
    skillName: row.skill_name,
    result: row.result,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findSkillManageInvocation(
  db: Queryable,
  tenantId: string,
  invocationId: string,
): Promise<SkillManageInvocation | null> {
  const result = await db.query<InvocationRow>(
    `SELECT tenant_id, invocation_id, argument_sha256, operation, skill_name, result, created_at, updated_at
     FROM skill_manage_invocations WHERE tenant_id = $1 AND invocation_id = $2`,
    [tenantId, invocationId],
  );
  const row = result.rows[0];
  return row ? toInvocation(row) : null;
}

/** Insert the record of an invocation's effect; a second insert for the same invocation fails (unique). */
export async function recordSkillManageInvocation(
  db: Queryable,
  invocation: Omit<SkillManageInvocation, 'createdAt' | 'updatedAt'>,
): Promise<void> {
  await db.query(
    `INSERT INTO skill_manage_invocations (tenant_id, invocation_id, argument_sha256, operation, skill_name, result)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [
      invocation.tenantId,
      invocation.invocationId,
      invocation.argumentSha256,
      invocation.operation,
      invocation.skillName,
      JSON.stringify(invocation.result),
    ],
  );
}

/** Replace an invocation's recorded result (a pending approval that was later resolved). */
export async function updateSkillManageInvocationResult(
  db: Queryable,
  tenantId: string,
  invocationId: string,
  result: Record<string, unknown>,
): Promise<void> {
  await db.query(
    `UPDATE skill_manage_invocations SET result = $3, updated_at = now() WHERE tenant_id = $1 AND invocation_id = $2`,
    [tenantId, invocationId, JSON.stringify(result)],
  );
}
