import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';

/** The `reviews` table: one row per background review, at most one per run. */

export type ReviewStatus = 'running' | 'completed' | 'failed';

export interface ReviewRecord {
  tenantId: string;
  runId: string;
  status: ReviewStatus;
  decision: string | null;
  detail: Record<string, unknown>;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

interface ReviewRow {
  tenant_id: string;
  run_id: string;
  status: ReviewStatus;
  decision: string | null;
  detail: Record<string, unknown>;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
}

const toReview = (row: ReviewRow): ReviewRecord => mapRow(row);

const COLUMNS = 'tenant_id, run_id, status, decision, detail, error, started_at, finished_at';

/** Records the review as running, or returns the row a previous attempt left. */
export async function beginReviewRecord(db: Queryable, tenantId: string, runId: string): Promise<ReviewRecord> {
  await db.query(`INSERT INTO reviews (tenant_id, run_id, status) VALUES ($1, $2, 'running') ON CONFLICT DO NOTHING`, [tenantId, runId]);
  return (await findReview(db, tenantId, runId))!;
}

export async function findReview(db: Queryable, tenantId: string, runId: string): Promise<ReviewRecord | undefined> {
  const { rows } = await db.query<ReviewRow>(`SELECT ${COLUMNS} FROM reviews WHERE tenant_id = $1 AND run_id = $2`, [tenantId, runId]);
  return rows[0] ? toReview(rows[0]) : undefined;
}

export async function finishReviewRecord(
  db: Queryable,
  tenantId: string,
  runId: string,
  outcome: { decision: string; detail: Record<string, unknown> },
): Promise<void> {
  await db.query(
    `UPDATE reviews SET status = 'completed', decision = $3, detail = detail || $4, finished_at = now()
      WHERE tenant_id = $1 AND run_id = $2 AND status = 'running'`,
    [tenantId, runId, outcome.decision, JSON.stringify(outcome.detail)],
  );
}

/** Marks a running review failed; true only for the call that did it, so the failure is logged once. */
export async function failReviewRecord(db: Queryable, tenantId: string, runId: string, error: string): Promise<boolean> {
  await db.query(`INSERT INTO reviews (tenant_id, run_id, status) VALUES ($1, $2, 'running') ON CONFLICT DO NOTHING`, [tenantId, runId]);
  const { rowCount } = await db.query(
    `UPDATE reviews SET status = 'failed', error = $3, finished_at = now() WHERE tenant_id = $1 AND run_id = $2 AND status = 'running'`,
    [tenantId, runId, error],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Claims the reviews of several runs for one review execution (a batch): a run's row is written
 * once, naming the execution in `detail.reviewId`; returns the runs this execution owns and has
 * not finished. A run another execution claimed first is left to it (at most once per run), and a
 * retried claim returns the same runs.
 */
export async function claimReviewRecords(db: Queryable, tenantId: string, runIds: readonly string[], reviewId: string): Promise<string[]> {
  if (runIds.length === 0) return [];
  await db.query(
    `INSERT INTO reviews (tenant_id, run_id, status, detail)
     SELECT $1, run_id, 'running', jsonb_build_object('reviewId', $3::text) FROM unnest($2::text[]) AS run_id
     ON CONFLICT DO NOTHING`,
    [tenantId, runIds, reviewId],
  );
  const { rows } = await db.query<{ run_id: string }>(
    `SELECT run_id FROM reviews WHERE tenant_id = $1 AND run_id = ANY($2::text[]) AND status = 'running' AND detail->>'reviewId' = $3
      ORDER BY run_id`,
    [tenantId, runIds, reviewId],
  );
  return rows.map((row) => row.run_id);
}

/** Finishes several claimed reviews in one statement (each only while it is still running; the claim's reviewId stays in detail). */
export async function finishReviewRecords(
  db: Queryable,
  tenantId: string,
  outcomes: ReadonlyArray<{ runId: string; decision: string; detail: Record<string, unknown> }>,
): Promise<void> {
  if (outcomes.length === 0) return;
  await db.query(
    `UPDATE reviews SET status = 'completed', decision = o.decision, detail = reviews.detail || o.detail, finished_at = now()
       FROM unnest($2::text[], $3::text[], $4::jsonb[]) AS o(run_id, decision, detail)
      WHERE reviews.tenant_id = $1 AND reviews.run_id = o.run_id AND reviews.status = 'running'`,
    [
      tenantId,
      outcomes.map((outcome) => outcome.runId),
      outcomes.map((outcome) => outcome.decision),
      outcomes.map((outcome) => JSON.stringify(outcome.detail)),
    ],
  );
}
