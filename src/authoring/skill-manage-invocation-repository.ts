import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';

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

export async function findSkillManageInvocation(
  db: Queryable,
  tenantId: string,
  invocationId: string,
): Promise<SkillManageInvocation | undefined> {
  const result = await db.query<InvocationRow>(
    `SELECT tenant_id, invocation_id, argument_sha256, operation, skill_name, result, created_at, updated_at
     FROM skill_manage_invocations WHERE tenant_id = $1 AND invocation_id = $2`,
    [tenantId, invocationId],
  );
  const row = result.rows[0];
  return row ? mapRow(row) : undefined;
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
  await db.query(`UPDATE skill_manage_invocations SET result = $3, updated_at = now() WHERE tenant_id = $1 AND invocation_id = $2`, [
    tenantId,
    invocationId,
    JSON.stringify(result),
  ]);
}
