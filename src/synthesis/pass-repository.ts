import type pg from 'pg';
import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import type { ConsensusStep } from '../procedures/procedure.ts';
import { emptyPassCounts, type NewPassCluster, type PassCluster, type PassCounts, type PassRecord, type PassStatus } from './pass-record.ts';

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
  const { rows } = await db.query<PassRow>(
    `SELECT ${PASS_COLUMNS} FROM passes WHERE tenant_id = $1 ORDER BY started_at DESC LIMIT $2`,
    [tenantId, limit],
  );
  return rows.map(toPass);
}

export async function updatePassCounts(db: Queryable, tenantId: string, id: string, counts: Partial<PassCounts>): Promise<void> {
  await db.query(`UPDATE passes SET counts = counts || $3::jsonb WHERE tenant_id = $1 AND id = $2`, [
    tenantId,
    id,
    JSON.stringify(counts),
  ]);
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
          'added', c.added, 'updated', c.updated, 'noop', c.noop, 'superseded', c.superseded, 'skipped', c.skipped)
       FROM (SELECT count(*) FILTER (WHERE decision = 'add') AS added,
                    count(*) FILTER (WHERE decision = 'update') AS updated,
                    count(*) FILTER (WHERE decision = 'noop') AS noop,
                    count(*) FILTER (WHERE decision = 'supersede') AS superseded,
                    count(*) FILTER (WHERE status = 'skipped') AS skipped
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
}

const toCluster = (row: PassClusterRow): PassCluster => mapRow(row);

const CLUSTER_COLUMNS = `cluster_key, rank, run_ids, successful_run_ids, size, successful, success_rate, qualifying, reason, status,
  candidate, tool_sequence, decision, skill_name, revision, skip_reason`;

/** Records the clusters a pass found; idempotent, so a retried cluster step writes nothing twice. */
export async function recordPassClusters(db: Queryable, tenantId: string, passId: string, clusters: NewPassCluster[]): Promise<void> {
  const batchSize = 500;
  for (let start = 0; start < clusters.length; start += batchSize) {
    const batch = clusters.slice(start, start + batchSize);
    await db.query(
      `INSERT INTO pass_clusters (tenant_id, pass_id, cluster_key, rank, run_ids, successful_run_ids, size, successful,
         success_rate, qualifying, reason)
       SELECT $1, $2, c.cluster_key, c.rank, c.run_ids, c.successful_run_ids, c.size, c.successful, c.success_rate,
              c.qualifying, c.reason
         FROM jsonb_to_recordset($3::jsonb) AS c(cluster_key text, rank int, run_ids jsonb, successful_run_ids jsonb,
              size int, successful int,
              success_rate double precision, qualifying boolean, reason text)
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

export async function listPassClusters(db: Queryable, tenantId: string, passId: string): Promise<PassCluster[]> {
  const { rows } = await db.query<PassClusterRow>(
    `SELECT ${CLUSTER_COLUMNS} FROM pass_clusters WHERE tenant_id = $1 AND pass_id = $2 ORDER BY qualifying DESC, rank NULLS LAST, cluster_key`,
    [tenantId, passId],
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
      WHERE tenant_id = $1 AND pass_id = $2 AND cluster_key = $3 AND status IN ('pending', 'distilled')`,
    [tenantId, passId, clusterKey, candidate.document, JSON.stringify(candidate.toolSequence)],
  );
}

export async function markClusterSkipped(db: Queryable, tenantId: string, passId: string, clusterKey: string, reason: string): Promise<void> {
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
    `UPDATE pass_clusters SET status = 'installed', decision = $4, skill_name = $5, revision = $6, skip_reason = $7
      WHERE tenant_id = $1 AND pass_id = $2 AND cluster_key = $3`,
    [tenantId, passId, clusterKey, outcome.decision, outcome.skillName, outcome.revision, outcome.reason ?? null],
  );
}
