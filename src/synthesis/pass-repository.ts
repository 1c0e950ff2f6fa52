import type pg from 'pg';
import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import type { ConsensusStep } from '../procedures/procedure.ts';
import { emptyPassCounts, passCountKeys, type PassCounts, type PassRecord, type PassStatus } from '../contracts/pass-record.ts';
import { type NewPassCluster, type PassCluster } from './pass-cluster.ts';

/** The `passes` and `pass_clusters` tables: what each synthesis pass saw, decided and installed. */

interface PassRow {
  id: string;
  tenant_id: string;
  workflow_run_id: string | null;
  status: PassStatus;
  outcome: string | null;
  full_pass: boolean;
  since: Date | null;
  distiller: string;
  counts: Partial<PassCounts>;
  started_at: Date;
  finished_at: Date | null;
}

function toPass({ full_pass, since, counts, started_at, finished_at, ...columns }: PassRow): PassRecord {
  return {
    ...mapRow(columns),
    full: full_pass,
    since: since?.toISOString() ?? null,
    counts: { ...emptyPassCounts(), ...counts },
    startedAt: started_at.toISOString(),
    finishedAt: finished_at?.toISOString() ?? null,
  };
}

const PASS_COLUMNS = 'id, tenant_id, workflow_run_id, status, outcome, full_pass, since, distiller, counts, started_at, finished_at';

/** Where an incremental pass starts: when the last completed pass started (runs after it are new). */
export async function lastCompletedPassStart(db: Queryable, tenantId: string): Promise<Date | null> {
  const { rows } = await db.query<{ started_at: Date }>(
    `SELECT started_at FROM passes WHERE tenant_id = $1 AND status = 'completed' ORDER BY started_at DESC LIMIT 1`,
    [tenantId],
  );
  return rows[0]?.started_at ?? null;
}

/** Records the pass as running; a replayed or retried start returns the row already there. */
export async function beginPassRecord(
  db: Queryable,
  pass: { tenantId: string; id: string; workflowRunId: string; full: boolean; since: Date | null; distiller: string },
): Promise<PassRecord> {
  await db.query(
    `INSERT INTO passes (tenant_id, id, workflow_run_id, status, full_pass, since, distiller)
     VALUES ($1, $2, $3, 'running', $4, $5, $6) ON CONFLICT (tenant_id, id) DO NOTHING`,
    [pass.tenantId, pass.id, pass.workflowRunId, pass.full, pass.since, pass.distiller],
  );
  return (await findPass(db, pass.tenantId, pass.id))!;
}

export async function findPass(db: Queryable, tenantId: string, id: string): Promise<PassRecord | undefined> {
  const { rows } = await db.query<PassRow>(`SELECT ${PASS_COLUMNS} FROM passes WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return rows[0] ? toPass(rows[0]) : undefined;
}

export async function listPasses(db: Queryable, tenantId: string, limit: number): Promise<PassRecord[]> {
  const { rows } = await db.query<PassRow>(`SELECT ${PASS_COLUMNS} FROM passes WHERE tenant_id = $1 ORDER BY started_at DESC LIMIT $2`, [
    tenantId,
    limit,
  ]);
  return rows.map(toPass);
}

export async function updatePassCounts(db: Queryable, tenantId: string, id: string, counts: Partial<PassCounts>): Promise<void> {
  await db.query(`UPDATE passes SET counts = counts || $3::jsonb WHERE tenant_id = $1 AND id = $2`, [tenantId, id, JSON.stringify(counts)]);
}

/**
 * Ends the pass: the decision counts come from its clusters, so the record cannot disagree with
 * what was installed. A pass already ended keeps its first ending.
 */
export async function finishPassRecord(
  db: Queryable,
  tenantId: string,
  id: string,
  status: Exclude<PassStatus, 'running'>,
  outcome: string | null,
): Promise<PassRecord> {
  await db.query(
    `UPDATE passes p SET status = $3, outcome = $4, finished_at = now(),
        counts = p.counts || jsonb_build_object(
          'added', c.added, 'updated', c.updated, 'noop', c.noop, 'superseded', c.superseded, 'skipped', c.skipped,
          'pending', c.pending)
       FROM (SELECT count(*) FILTER (WHERE status = 'installed' AND decision = 'add') AS added,
                    count(*) FILTER (WHERE status = 'installed' AND decision = 'update') AS updated,
                    count(*) FILTER (WHERE status IN ('reconciled', 'installed') AND decision = 'noop') AS noop,
                    count(*) FILTER (WHERE status = 'installed' AND decision = 'supersede') AS superseded,
                    count(*) FILTER (WHERE status = 'skipped') AS skipped,
                    count(*) FILTER (WHERE qualifying AND status IN ('pending', 'reconciled', 'distilled')
                                       AND decision IS DISTINCT FROM 'noop') AS pending
               FROM pass_clusters WHERE tenant_id = $1 AND pass_id = $2) c
      WHERE p.tenant_id = $1 AND p.id = $2 AND p.status = 'running'`,
    [tenantId, id, status, outcome],
  );
  return (await findPass(db, tenantId, id))!;
}

interface PassClusterRow {
  cluster_key: string;
  rank: number | null;
  run_ids: string[];
  successful_run_ids: string[];
  size: number;
  successful: number;
  success_rate: number;
  qualifying: boolean;
  reason: string | null;
  status: PassCluster['status'];
  candidate: string | null;
  tool_sequence: ConsensusStep[] | null;
  decision: PassCluster['decision'];
  skill_name: string | null;
  revision: number | null;
  skip_reason: string | null;
  target_procedure_id: string | null;
  decision_reason: string | null;
  value: number | null;
  carried_from: string | null;
  carried_to: string | null;
}

const toCluster = (row: PassClusterRow): PassCluster => mapRow(row);

const CLUSTER_COLUMNS = `cluster_key, rank, run_ids, successful_run_ids, size, successful, success_rate, qualifying, reason, status,
  candidate, tool_sequence, decision, skill_name, revision, skip_reason, target_procedure_id, decision_reason, value,
  carried_from, carried_to`;

/** Records the clusters a pass found; idempotent, so a retried cluster step writes nothing twice. */
export async function recordPassClusters(db: Queryable, tenantId: string, passId: string, clusters: NewPassCluster[]): Promise<void> {
  const batchSize = 500;
  for (let start = 0; start < clusters.length; start += batchSize) {
    const batch = clusters.slice(start, start + batchSize);
    await db.query(
      `INSERT INTO pass_clusters (tenant_id, pass_id, cluster_key, rank, run_ids, successful_run_ids, size, successful,
         success_rate, qualifying, reason, value)
       SELECT $1, $2, c.cluster_key, c.rank, c.run_ids, c.successful_run_ids, c.size, c.successful, c.success_rate,
              c.qualifying, c.reason, c.value
         FROM jsonb_to_recordset($3::jsonb) AS c(cluster_key text, rank int, run_ids jsonb, successful_run_ids jsonb,
              size int, successful int,
              success_rate double precision, qualifying boolean, reason text, value double precision)
       ON CONFLICT (tenant_id, pass_id, cluster_key) DO NOTHING`,
      [
        tenantId,
        passId,
        JSON.stringify(
          batch.map((cluster) => ({
            cluster_key: cluster.clusterKey,
            rank: cluster.rank,
            run_ids: cluster.runIds,
            successful_run_ids: cluster.successfulRunIds,
            size: cluster.size,
            successful: cluster.successful,
            success_rate: cluster.successRate,
            qualifying: cluster.qualifying,
            reason: cluster.reason,
            value: cluster.value,
          })),
        ),
      ],
    );
  }
}

export async function getPassCluster(db: Queryable, tenantId: string, passId: string, clusterKey: string): Promise<PassCluster> {
  const { rows } = await db.query<PassClusterRow>(
    `SELECT ${CLUSTER_COLUMNS} FROM pass_clusters WHERE tenant_id = $1 AND pass_id = $2 AND cluster_key = $3`,
    [tenantId, passId, clusterKey],
  );
  if (!rows[0]) throw new Error(`pass ${passId} has no cluster ${clusterKey}`);
  return toCluster(rows[0]);
}

/** The pass's clusters (only `clusterKeys` when given), qualifying ones first by rank. */
export async function listPassClusters(
  db: Queryable,
  tenantId: string,
  passId: string,
  clusterKeys?: readonly string[],
): Promise<PassCluster[]> {
  const { rows } = await db.query<PassClusterRow>(
    `SELECT ${CLUSTER_COLUMNS} FROM pass_clusters
      WHERE tenant_id = $1 AND pass_id = $2 AND ($3::text[] IS NULL OR cluster_key = ANY($3::text[]))
      ORDER BY qualifying DESC, rank NULLS LAST, cluster_key`,
    [tenantId, passId, clusterKeys ? [...clusterKeys] : null],
  );
  return rows.map(toCluster);
}

export async function markClusterDistilled(
  db: Queryable,
  tenantId: string,
  passId: string,
  clusterKey: string,
  candidate: { document: string; toolSequence: ConsensusStep[] },
): Promise<void> {
  await db.query(
    `UPDATE pass_clusters SET status = 'distilled', candidate = $4, tool_sequence = $5
      WHERE tenant_id = $1 AND pass_id = $2 AND cluster_key = $3 AND status IN ('pending', 'reconciled', 'distilled')`,
    [tenantId, passId, clusterKey, candidate.document, JSON.stringify(candidate.toolSequence)],
  );
}

export async function markClusterSkipped(
  db: Queryable,
  tenantId: string,
  passId: string,
  clusterKey: string,
  reason: string,
): Promise<void> {
  await db.query(
    `UPDATE pass_clusters SET status = 'skipped', skip_reason = $4
      WHERE tenant_id = $1 AND pass_id = $2 AND cluster_key = $3 AND status <> 'installed'`,
    [tenantId, passId, clusterKey, reason],
  );
}

/** Written inside the install transaction, so a cluster is marked installed exactly when its rows exist. */
export async function markClusterInstalled(
  db: pg.PoolClient | Queryable,
  tenantId: string,
  passId: string,
  clusterKey: string,
  outcome: { decision: 'add' | 'update' | 'noop' | 'supersede'; skillName: string; revision: number | null; reason?: string | undefined },
): Promise<void> {
  await db.query(
    `UPDATE pass_clusters SET status = 'installed', decision = $4, skill_name = $5, revision = $6,
        decision_reason = COALESCE($7, decision_reason)
      WHERE tenant_id = $1 AND pass_id = $2 AND cluster_key = $3`,
    [tenantId, passId, clusterKey, outcome.decision, outcome.skillName, outcome.revision, outcome.reason ?? null],
  );
}

/** Reconcile's decision, recorded before distillation: a NOOP ends the cluster here, anything else goes on to distil. */
export async function markClusterReconciled(
  db: Queryable,
  tenantId: string,
  passId: string,
  clusterKey: string,
  decision: {
    decision: 'add' | 'update' | 'noop' | 'supersede';
    targetProcedureId: string | null;
    skillName: string | null;
    revision: number | null;
    reason: string;
    toolSequence: ConsensusStep[];
  },
): Promise<void> {
  await db.query(
    // A cluster distilled before it was reconciled (a workflow started before 008) keeps its candidate, unless it is a NOOP.
    `UPDATE pass_clusters SET status = CASE WHEN status = 'pending' OR $4 = 'noop' THEN 'reconciled' ELSE status END,
        decision = $4, target_procedure_id = $5, skill_name = $6, revision = $7, decision_reason = $8,
        tool_sequence = CASE WHEN status = 'pending' THEN $9::jsonb ELSE tool_sequence END
      WHERE tenant_id = $1 AND pass_id = $2 AND cluster_key = $3 AND status IN ('pending', 'distilled') AND decision IS NULL`,
    [
      tenantId,
      passId,
      clusterKey,
      decision.decision,
      decision.targetProcedureId,
      decision.skillName,
      decision.revision,
      decision.reason,
      JSON.stringify(decision.toolSequence),
    ],
  );
}

/**
 * Takes over the qualifying clusters earlier passes left pending past their budget (of completed
 * passes, whose windows the next incremental pass does not see again, or carried ones): copied into
 * this pass, marked carried on the old pass. A full pass re-clusters every run, so it carries none.
 */
export async function carryPendingClusters(db: Queryable, tenantId: string, passId: string): Promise<number> {
  await db.query(
    `WITH waiting AS (
       SELECT c.* FROM pass_clusters c JOIN passes p ON p.tenant_id = c.tenant_id AND p.id = c.pass_id
        WHERE c.tenant_id = $1 AND c.pass_id <> $2 AND c.qualifying AND c.status = 'pending' AND c.carried_to IS NULL
          AND (p.status = 'completed' OR (p.status <> 'running' AND c.carried_from IS NOT NULL))
        ORDER BY c.value DESC NULLS LAST, c.cluster_key
        FOR UPDATE OF c),
     copied AS (
       INSERT INTO pass_clusters (tenant_id, pass_id, cluster_key, rank, run_ids, successful_run_ids, size, successful,
          success_rate, qualifying, reason, value, carried_from)
       SELECT tenant_id, $2, cluster_key, rank, run_ids, successful_run_ids, size, successful, success_rate, true, reason,
              value, pass_id
         FROM waiting
       ON CONFLICT (tenant_id, pass_id, cluster_key) DO NOTHING)
     UPDATE pass_clusters c SET carried_to = $2 FROM waiting w
      WHERE c.tenant_id = w.tenant_id AND c.pass_id = w.pass_id AND c.cluster_key = w.cluster_key`,
    [tenantId, passId],
  );
  // Counted from this pass's rows, so a retried step reports the same number.
  const { rows } = await db.query<{ carried: number }>(
    `SELECT count(*)::int AS carried FROM pass_clusters WHERE tenant_id = $1 AND pass_id = $2 AND carried_from IS NOT NULL`,
    [tenantId, passId],
  );
  return rows[0]!.carried;
}

/**
 * The pass's qualifying clusters in processing order — carried ones first, then by value — cut
 * at the budget (`passClusterBudget`): the rest stays pending with the reason, and the pass's
 * continuation (or the next pass) takes it first.
 */
export async function selectClustersToProcess(
  db: Queryable,
  tenantId: string,
  passId: string,
  budget: number,
): Promise<{ clusterKeys: string[]; waiting: number }> {
  const { rows } = await db.query<{ cluster_key: string }>(
    `SELECT cluster_key FROM pass_clusters WHERE tenant_id = $1 AND pass_id = $2 AND qualifying AND status = 'pending'
      ORDER BY (carried_from IS NOT NULL) DESC, value DESC NULLS LAST, rank NULLS LAST, cluster_key`,
    [tenantId, passId],
  );
  const ordered = rows.map((row) => row.cluster_key);
  const waiting = ordered.slice(budget);
  if (waiting.length > 0) {
    await db.query(
      `UPDATE pass_clusters SET decision_reason = 'waiting: ranked ' || (w.position + $4) || ' of ' || $5 ||
          ' by value (successful runs × success rate), past the LLM budget of ' || $4 ||
          ' clusters per pass (SKILLSMITH_MAX_CLUSTERS_PER_PASS); the pass''s continuation takes it first'
         FROM unnest($3::text[]) WITH ORDINALITY AS w(cluster_key, position)
        WHERE pass_clusters.tenant_id = $1 AND pass_clusters.pass_id = $2 AND pass_clusters.cluster_key = w.cluster_key`,
      [tenantId, passId, waiting, budget, ordered.length],
    );
  }
  return { clusterKeys: ordered.slice(0, budget), waiting: waiting.length };
}

export interface PassSummary {
  tenantId: string;
  /** Passes per status. */
  byStatus: Partial<Record<PassStatus, number>>;
  /** Ended passes, and their summed wall time (started → finished). */
  finished: number;
  durationSecondsTotal: number;
  /** The pass counts summed over every pass: clusters, qualifying and decisions by kind. */
  counts: PassCounts;
  /** The newest ended pass, or null. */
  last: { id: string; status: PassStatus; durationSeconds: number; finishedAt: Date; counts: PassCounts } | null;
}

/** Per tenant (or for one): what its synthesis passes did, from the pass records — two aggregate queries. */
export async function summarizePasses(db: Queryable, tenantId: string | null): Promise<PassSummary[]> {
  const sums = passCountKeys.map((key) => `coalesce(sum((counts->>'${key}')::bigint), 0)::text AS "${key}"`).join(', ');
  const totals = await db.query<Record<string, string> & { tenant_id: string; by_status: Record<string, number> }>(
    `SELECT tenant_id,
            (SELECT jsonb_object_agg(status, n) FROM (SELECT status, count(*)::int AS n FROM passes q
              WHERE q.tenant_id = p.tenant_id GROUP BY status) s) AS by_status,
            count(finished_at)::text AS finished,
            coalesce(sum(EXTRACT(EPOCH FROM (finished_at - started_at))), 0)::text AS duration,
            ${sums}
       FROM passes p WHERE ($1::text IS NULL OR tenant_id = $1) GROUP BY tenant_id ORDER BY tenant_id`,
    [tenantId],
  );
  const lasts = await db.query<PassRow & { duration: string }>(
    `SELECT DISTINCT ON (tenant_id) ${PASS_COLUMNS}, EXTRACT(EPOCH FROM (finished_at - started_at))::text AS duration
       FROM passes WHERE ($1::text IS NULL OR tenant_id = $1) AND finished_at IS NOT NULL
      ORDER BY tenant_id, finished_at DESC`,
    [tenantId],
  );
  const lastByTenant = new Map(lasts.rows.map((row) => [row.tenant_id, row]));
  return totals.rows.map((row) => {
    const last = lastByTenant.get(row.tenant_id);
    const record = last ? toPass(last) : undefined;
    return {
      tenantId: row.tenant_id,
      byStatus: row.by_status ?? {},
      finished: Number(row.finished),
      durationSecondsTotal: Number(row.duration),
      counts: Object.fromEntries(passCountKeys.map((key) => [key, Number(row[key] ?? 0)])) as PassCounts,
      last:
        last && record
          ? {
              id: record.id,
              status: record.status,
              durationSeconds: Number(last.duration),
              finishedAt: last.finished_at!,
              counts: record.counts,
            }
          : null,
    };
  });
}

/** A failed or cancelled run of a pass, in a cluster that does not qualify: its goal and the tools it called, in order. */
export interface UnsuccessfulRunApart {
  runId: string;
  goal: string;
  tools: string[];
}

/**
 * The failed and cancelled runs of the pass's non-qualifying clusters (a run that failed part-way
 * has fewer successful calls than the procedure it attempted, so clustering often puts it apart),
 * with the tools each called. Those of qualifying clusters are already counted by their cluster.
 */
export async function findUnsuccessfulRunsApart(db: Queryable, tenantId: string, passId: string): Promise<UnsuccessfulRunApart[]> {
  const { rows } = await db.query<{ run_id: string; goal: string; tools: string[] | null }>(
    `SELECT r.run_id, r.goal,
            (SELECT array_agg(tc.tool ORDER BY tc.seq) FROM tool_calls tc
              WHERE tc.tenant_id = r.tenant_id AND tc.run_id = r.run_id) AS tools
       FROM pass_clusters pc
       CROSS JOIN LATERAL jsonb_array_elements_text(pc.run_ids) AS member(run_id)
       JOIN runs r ON r.tenant_id = pc.tenant_id AND r.run_id = member.run_id
      WHERE pc.tenant_id = $1 AND pc.pass_id = $2 AND NOT pc.qualifying AND r.status <> 'completed'
      ORDER BY r.run_id`,
    [tenantId, passId],
  );
  return rows.map((row) => ({ runId: row.run_id, goal: row.goal, tools: row.tools ?? [] }));
}
