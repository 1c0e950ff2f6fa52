import type { Queryable } from '../store/database.ts';
import type { RolloutOverride } from './activation.ts';
import type { Combination, PairedCounts, PairedSample } from './paired-evidence.ts';

/** The only module with SQL for `rollout_pairs` and `rollout_overrides` (schema/010_rollout.sql). */

interface PairRow {
  model_policy: string;
  policy_profile: string;
  authoring_version: string;
  case_id: string;
  baseline_completed: boolean;
  authored_completed: boolean;
  baseline_policy_failures: number;
  authored_policy_failures: number;
}

const toPair = (row: PairRow): PairedSample => ({
  caseId: row.case_id,
  baselineCompleted: row.baseline_completed,
  authoredCompleted: row.authored_completed,
  baselinePolicyFailures: row.baseline_policy_failures,
  authoredPolicyFailures: row.authored_policy_failures,
  modelPolicy: row.model_policy,
  policyProfile: row.policy_profile,
  authoringVersion: row.authoring_version,
});

interface OverrideRow {
  id: string;
  tenant_id: string;
  model_policy: string;
  policy_profile: string;
  authoring_version: string;
  action: 'grant' | 'revoke';
  decided_by: string;
  reason: string;
  decided_at: Date;
}

const toOverride = (row: OverrideRow): RolloutOverride => ({
  id: Number(row.id),
  tenantId: row.tenant_id,
  combination: { modelPolicy: row.model_policy, policyProfile: row.policy_profile, authoringVersion: row.authoring_version },
  action: row.action,
  decidedBy: row.decided_by,
  reason: row.reason,
  decidedAt: row.decided_at,
});

const combinationColumns = (combination: Combination): string[] => [
  combination.modelPolicy,
  combination.policyProfile,
  combination.authoringVersion,
];

/** The stored pairs among `samples` (same tenant, combination and case id), to compare outcomes. */
export async function findStoredPairs(db: Queryable, tenantId: string, samples: readonly PairedSample[]): Promise<PairedSample[]> {
  if (samples.length === 0) return [];
  const { rows } = await db.query<PairRow>(
    `SELECT p.model_policy, p.policy_profile, p.authoring_version, p.case_id, p.baseline_completed,
            p.authored_completed, p.baseline_policy_failures, p.authored_policy_failures
       FROM rollout_pairs p
       JOIN unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS u(model_policy, policy_profile, authoring_version, case_id)
         ON (p.model_policy, p.policy_profile, p.authoring_version, p.case_id) =
            (u.model_policy, u.policy_profile, u.authoring_version, u.case_id)
      WHERE p.tenant_id = $1`,
    [
      tenantId,
      samples.map((sample) => sample.modelPolicy),
      samples.map((sample) => sample.policyProfile),
      samples.map((sample) => sample.authoringVersion),
      samples.map((sample) => sample.caseId),
    ],
  );
  return rows.map(toPair);
}

/** Inserts the pairs not stored yet; returns how many were new. */
export async function insertPairs(db: Queryable, tenantId: string, samples: readonly PairedSample[]): Promise<number> {
  if (samples.length === 0) return 0;
  const result = await db.query(
    `INSERT INTO rollout_pairs (tenant_id, model_policy, policy_profile, authoring_version, case_id, baseline_completed,
                                authored_completed, baseline_policy_failures, authored_policy_failures)
     SELECT $1, u.* FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::boolean[],
                                $8::integer[], $9::integer[])
       AS u(model_policy, policy_profile, authoring_version, case_id, baseline_completed, authored_completed,
            baseline_policy_failures, authored_policy_failures)
     ON CONFLICT DO NOTHING`,
    [
      tenantId,
      samples.map((sample) => sample.modelPolicy),
      samples.map((sample) => sample.policyProfile),
      samples.map((sample) => sample.authoringVersion),
      samples.map((sample) => sample.caseId),
      samples.map((sample) => sample.baselineCompleted),
      samples.map((sample) => sample.authoredCompleted),
      samples.map((sample) => sample.baselinePolicyFailures),
      samples.map((sample) => sample.authoredPolicyFailures),
    ],
  );
  return result.rowCount ?? 0;
}

const PAIR_COUNT_COLUMNS = `count(*)::int AS n,
            count(*) FILTER (WHERE authored_completed AND NOT baseline_completed)::int AS b,
            count(*) FILTER (WHERE baseline_completed AND NOT authored_completed)::int AS c,
            count(*) FILTER (WHERE authored_policy_failures > baseline_policy_failures)::int AS regressed_cases,
            coalesce(sum(baseline_policy_failures), 0)::text AS baseline_policy_failures,
            coalesce(sum(authored_policy_failures), 0)::text AS authored_policy_failures`;

interface PairCountRow {
  n: number;
  b: number;
  c: number;
  regressed_cases: number;
  baseline_policy_failures: string;
  authored_policy_failures: string;
}

function toPairedCounts(row: PairCountRow): PairedCounts {
  return {
    n: row.n,
    b: row.b,
    c: row.c,
    regressedCases: row.regressed_cases,
    baselinePolicyFailures: Number(row.baseline_policy_failures),
    authoredPolicyFailures: Number(row.authored_policy_failures),
  };
}

/** n, b, c and the policy-failure figures over one tenant's pairs for exactly one combination. */
export async function countPairs(db: Queryable, tenantId: string, combination: Combination): Promise<PairedCounts> {
  const { rows } = await db.query<PairCountRow>(
    `SELECT ${PAIR_COUNT_COLUMNS}
       FROM rollout_pairs
      WHERE tenant_id = $1 AND model_policy = $2 AND policy_profile = $3 AND authoring_version = $4`,
    [tenantId, ...combinationColumns(combination)],
  );
  return toPairedCounts(rows[0]!);
}

/** Every combination the tenant has evidence for, with its pair count. */
export async function listEvidenceCombinations(db: Queryable, tenantId: string): Promise<Array<{ combination: Combination; n: number }>> {
  const { rows } = await db.query<{ model_policy: string; policy_profile: string; authoring_version: string; n: number }>(
    `SELECT model_policy, policy_profile, authoring_version, count(*)::int AS n
       FROM rollout_pairs WHERE tenant_id = $1
      GROUP BY model_policy, policy_profile, authoring_version
      ORDER BY model_policy, policy_profile, authoring_version`,
    [tenantId],
  );
  return rows.map((row) => ({
    combination: { modelPolicy: row.model_policy, policyProfile: row.policy_profile, authoringVersion: row.authoring_version },
    n: row.n,
  }));
}

export interface OverrideInput {
  combination: Combination;
  action: RolloutOverride['action'];
  decidedBy: string;
  reason: string;
}

export async function insertOverride(db: Queryable, tenantId: string, input: OverrideInput): Promise<RolloutOverride> {
  const { rows } = await db.query<OverrideRow>(
    `INSERT INTO rollout_overrides (tenant_id, model_policy, policy_profile, authoring_version, action, decided_by, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING *`,
    [tenantId, ...combinationColumns(input.combination), input.action, input.decidedBy, input.reason],
  );
  return toOverride(rows[0]!);
}

/** The tenant's override decisions, oldest first; only those for `combination` when given. */
export async function listOverrides(db: Queryable, tenantId: string, combination?: Combination): Promise<RolloutOverride[]> {
  const { rows } = combination
    ? await db.query<OverrideRow>(
        `SELECT * FROM rollout_overrides
          WHERE tenant_id = $1 AND model_policy = $2 AND policy_profile = $3 AND authoring_version = $4
          ORDER BY id`,
        [tenantId, ...combinationColumns(combination)],
      )
    : await db.query<OverrideRow>('SELECT * FROM rollout_overrides WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  return rows.map(toOverride);
}

/** The decision in force for the tenant and combination: its latest grant or revoke. */
export async function latestOverride(db: Queryable, tenantId: string, combination: Combination): Promise<RolloutOverride | null> {
  const { rows } = await db.query<OverrideRow>(
    `SELECT * FROM rollout_overrides
      WHERE tenant_id = $1 AND model_policy = $2 AND policy_profile = $3 AND authoring_version = $4
      ORDER BY id DESC LIMIT 1`,
    [tenantId, ...combinationColumns(combination)],
  );
  return rows[0] ? toOverride(rows[0]) : null;
}

/** `countPairs` for every combination of one tenant or of every tenant (`null`), in one aggregate. */
export async function countPairsByCombination(
  db: Queryable,
  tenantId: string | null,
): Promise<Array<{ tenantId: string; combination: Combination; counts: PairedCounts }>> {
  const { rows } = await db.query<
    PairCountRow & { tenant_id: string; model_policy: string; policy_profile: string; authoring_version: string }
  >(
    `SELECT tenant_id, model_policy, policy_profile, authoring_version, ${PAIR_COUNT_COLUMNS}
       FROM rollout_pairs WHERE ($1::text IS NULL OR tenant_id = $1)
      GROUP BY tenant_id, model_policy, policy_profile, authoring_version
      ORDER BY tenant_id, model_policy, policy_profile, authoring_version`,
    [tenantId],
  );
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    combination: { modelPolicy: row.model_policy, policyProfile: row.policy_profile, authoringVersion: row.authoring_version },
    counts: toPairedCounts(row),
  }));
}
