import type pg from 'pg';
import { withTransaction, type Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import { runReportSha256, type RunReport, type RunStatus } from './run-report.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * The only module with SQL for `runs` and `tool_calls`. Every statement filters by tenant.
 *
 * Ingestion is an idempotent upsert on (tenant, runId): the same content again changes
 * nothing ("unchanged"); different content under a stored runId is refused with
 * `RunConflict` and nothing in that batch is written. A batch is one short transaction
 * (the embedded database runs one transaction at a time).
 */

/** A run was re-reported with content that differs from what is stored. Never retried. */
export class RunConflict extends SkillsmithError {
  static override readonly code = 'RunConflict';
  static override readonly httpStatus = 409;
  constructor(
    readonly tenantId: string,
    readonly runIds: readonly string[],
  ) {
    const shown = runIds
      .slice(0, 5)
      .map((runId) => JSON.stringify(runId))
      .join(', ');
    const more = runIds.length > 5 ? ` and ${runIds.length - 5} more` : '';
    super(
      `run ${shown}${more} in tenant ${JSON.stringify(tenantId)} ` +
        `${runIds.length === 1 ? 'was' : 'were'} already ingested with different content; a reported run cannot change`,
    );
  }
}

export interface UpsertRunsResult {
  /** Run ids written by this call. */
  inserted: string[];
  /** Run ids already stored with identical content (nothing written). */
  unchanged: string[];
}

export interface StoredRunHash {
  runId: string;
  contentSha256: string;
}

function nullable<T>(value: T | undefined): T | null {
  return value === undefined ? null : value;
}

/** The stored content hashes of those of `runIds` that exist in the tenant. */
export async function findStoredRunHashes(db: Queryable, tenantId: string, runIds: readonly string[]): Promise<StoredRunHash[]> {
  if (runIds.length === 0) return [];
  const { rows } = await db.query<{ run_id: string; content_sha256: string }>(
    'SELECT run_id, content_sha256 FROM runs WHERE tenant_id = $1 AND run_id = ANY($2::text[])',
    [tenantId, runIds],
  );
  return rows.map(mapRow);
}

/**
 * Inserts the runs of one tenant that are not stored yet, with their tool calls, in one
 * transaction: a multi-row INSERT … ON CONFLICT DO NOTHING, then a hash comparison for the
 * rows that already existed. Throws `RunConflict` (and writes nothing) when any run differs.
 */
export async function upsertRuns(pool: pg.Pool, tenantId: string, reports: readonly RunReport[]): Promise<UpsertRunsResult> {
  if (reports.length === 0) return { inserted: [], unchanged: [] };
  const hashes = new Map<string, string>();
  const batch: { report: RunReport; contentSha256: string }[] = [];
  const conflictsInBatch: string[] = [];
  for (const report of reports) {
    if (report.tenantId !== tenantId) {
      throw new RangeError(`upsertRuns(${tenantId}) was given run ${report.runId} of tenant ${report.tenantId}`);
    }
    const contentSha256 = runReportSha256(report);
    const seen = hashes.get(report.runId);
    if (seen === undefined) {
      hashes.set(report.runId, contentSha256);
      batch.push({ report, contentSha256 });
    } else if (seen !== contentSha256) {
      conflictsInBatch.push(report.runId);
    }
  }
  if (conflictsInBatch.length > 0) throw new RunConflict(tenantId, conflictsInBatch);

  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ run_id: string }>(
      `INSERT INTO runs (tenant_id, run_id, agent_id, session_id, goal, status, origin_trust, skill_pins,
                         started_at, completed_at, tool_call_count, content_sha256)
       SELECT $1, u.run_id, u.agent_id, u.session_id, u.goal, u.status, u.origin_trust, u.skill_pins::jsonb,
              u.started_at::timestamptz, u.completed_at::timestamptz, u.tool_call_count, u.content_sha256
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                     $9::text[], $10::text[], $11::integer[], $12::text[])
              AS u(run_id, agent_id, session_id, goal, status, origin_trust, skill_pins,
                   started_at, completed_at, tool_call_count, content_sha256)
       ON CONFLICT (tenant_id, run_id) DO NOTHING
       RETURNING run_id`,
      [
        tenantId,
        batch.map(({ report }) => report.runId),
        batch.map(({ report }) => report.agentId),
        batch.map(({ report }) => report.sessionId),
        batch.map(({ report }) => report.goal),
        batch.map(({ report }) => report.status),
        batch.map(({ report }) => report.originTrust),
        batch.map(({ report }) => JSON.stringify(report.skillPins)),
        batch.map(({ report }) => report.startedAt),
        batch.map(({ report }) => report.completedAt),
        batch.map(({ report }) => report.toolCalls.length),
        batch.map(({ contentSha256 }) => contentSha256),
      ],
    );
    const inserted = new Set(rows.map((row) => row.run_id));

    const existing = batch.filter(({ report }) => !inserted.has(report.runId));
    const unchanged: string[] = [];
    if (existing.length > 0) {
      const stored = new Map(
        (
          await findStoredRunHashes(
            client,
            tenantId,
            existing.map(({ report }) => report.runId),
          )
        ).map((row) => [row.runId, row.contentSha256]),
      );
      const conflicts: string[] = [];
      for (const { report, contentSha256 } of existing) {
        if (stored.get(report.runId) === contentSha256) unchanged.push(report.runId);
        else conflicts.push(report.runId);
      }
      // Throwing rolls the whole batch back: nothing of it is written.
      if (conflicts.length > 0) throw new RunConflict(tenantId, conflicts);
    }

    const calls = batch
      .filter(({ report }) => inserted.has(report.runId))
      .flatMap(({ report }) => report.toolCalls.map((call, seq) => ({ runId: report.runId, seq, call })));
    if (calls.length > 0) {
      await client.query(
        `INSERT INTO tool_calls (tenant_id, run_id, seq, tool, args, result_summary, success, error, duration_ms, at)
         SELECT $1, u.run_id, u.seq, u.tool, u.args::jsonb, u.result_summary, u.success, u.error, u.duration_ms,
                u.at::timestamptz
           FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::text[],
                       $9::bigint[], $10::text[])
                AS u(run_id, seq, tool, args, result_summary, success, error, duration_ms, at)
         ON CONFLICT (tenant_id, run_id, seq) DO NOTHING`,
        [
          tenantId,
          calls.map(({ runId }) => runId),
          calls.map(({ seq }) => seq),
          calls.map(({ call }) => call.tool),
          calls.map(({ call }) => (call.args === undefined ? null : JSON.stringify(call.args))),
          calls.map(({ call }) => nullable(call.resultSummary)),
          calls.map(({ call }) => call.success),
          calls.map(({ call }) => nullable(call.error)),
          calls.map(({ call }) => nullable(call.durationMs)),
          calls.map(({ call }) => nullable(call.at)),
        ],
      );
    }
    return { inserted: batch.map(({ report }) => report.runId).filter((runId) => inserted.has(runId)), unchanged };
  });
}

export interface RunCounts {
  runs: number;
  toolCalls: number;
}

export async function countRuns(db: Queryable, tenantId: string): Promise<RunCounts> {
  const { rows } = await db.query<{ runs: string; tool_calls: string }>(
    `SELECT (SELECT count(*) FROM runs WHERE tenant_id = $1) AS runs,
            (SELECT count(*) FROM tool_calls WHERE tenant_id = $1) AS tool_calls`,
    [tenantId],
  );
  const row = rows[0];
  return { runs: Number(row?.runs ?? 0), toolCalls: Number(row?.tool_calls ?? 0) };
}

export interface RunStatusSummary {
  tenantId: string;
  status: 'completed' | 'failed' | 'cancelled';
  runs: number;
  /** When the newest of them was stored (the intake's last write). */
  lastStoredAt: Date;
}

/** Stored runs per tenant and status — the intake's "stored" and the tenant's baseline completion rate. */
export async function summarizeRunStatuses(db: Queryable, tenantId: string | null): Promise<RunStatusSummary[]> {
  const { rows } = await db.query<{ tenant_id: string; status: RunStatusSummary['status']; runs: string; last_stored_at: Date }>(
    `SELECT tenant_id, status, count(*)::text AS runs, max(ingested_at) AS last_stored_at
       FROM runs WHERE ($1::text IS NULL OR tenant_id = $1)
      GROUP BY tenant_id, status ORDER BY tenant_id, status`,
    [tenantId],
  );
  return rows.map((row) => ({ tenantId: row.tenant_id, status: row.status, runs: Number(row.runs), lastStoredAt: row.last_stored_at }));
}

/** Which of `runIds` failed or were cancelled: the attempts that are not successes. */
export async function findUnsuccessfulRunIds(db: Queryable, tenantId: string, runIds: string[]): Promise<string[]> {
  const { rows } = await db.query<{ run_id: string }>(
    `SELECT run_id FROM runs WHERE tenant_id = $1 AND run_id = ANY($2::text[]) AND status <> 'completed' ORDER BY run_id`,
    [tenantId, runIds],
  );
  return rows.map((row) => row.run_id);
}

/** What decides whether a stored run gets a review, and whether it has one already. */
export interface RunReviewFacts {
  runId: string;
  status: RunStatus;
  toolCallCount: number;
  skillPinCount: number;
  reviewed: boolean;
}

/** The review facts of the given stored runs of a tenant (unknown ids are left out). */
export async function findRunReviewFacts(db: Queryable, tenantId: string, runIds: readonly string[]): Promise<RunReviewFacts[]> {
  if (runIds.length === 0) return [];
  const { rows } = await db.query<{
    run_id: string;
    status: RunStatus;
    tool_call_count: number;
    skill_pin_count: number;
    reviewed: boolean;
  }>(
    `SELECT r.run_id, r.status, r.tool_call_count, jsonb_array_length(r.skill_pins) AS skill_pin_count,
            EXISTS (SELECT 1 FROM reviews v WHERE v.tenant_id = r.tenant_id AND v.run_id = r.run_id) AS reviewed
       FROM runs r WHERE r.tenant_id = $1 AND r.run_id = ANY($2::text[]) ORDER BY r.run_id`,
    [tenantId, runIds],
  );
  return rows.map((row) => ({
    runId: row.run_id,
    status: row.status,
    toolCallCount: row.tool_call_count,
    skillPinCount: row.skill_pin_count,
    reviewed: row.reviewed,
  }));
}

/** A stored run as it was reported (for inspection, tests and the review step). */
/** What a review batch reads of its runs: id, goal, status and pins, without their tool calls (unknown ids are left out). */
export async function findRunOutlines(
  db: Queryable,
  tenantId: string,
  runIds: readonly string[],
): Promise<Array<Pick<RunReport, 'runId' | 'goal' | 'status' | 'skillPins'>>> {
  if (runIds.length === 0) return [];
  const { rows } = await db.query<{ run_id: string; goal: string; status: RunStatus; skill_pins: RunReport['skillPins'] }>(
    `SELECT run_id, goal, status, skill_pins FROM runs WHERE tenant_id = $1 AND run_id = ANY($2::text[]) ORDER BY run_id`,
    [tenantId, runIds],
  );
  return rows.map((row) => ({ runId: row.run_id, goal: row.goal, status: row.status, skillPins: row.skill_pins }));
}

export async function findRun(db: Queryable, tenantId: string, runId: string): Promise<RunReport | undefined> {
  const runResult = await db.query<{
    agent_id: string;
    session_id: string;
    goal: string;
    status: RunStatus;
    origin_trust: RunReport['originTrust'];
    skill_pins: RunReport['skillPins'];
    started_at: Date;
    completed_at: Date;
  }>(
    `SELECT agent_id, session_id, goal, status, origin_trust, skill_pins, started_at, completed_at
       FROM runs WHERE tenant_id = $1 AND run_id = $2`,
    [tenantId, runId],
  );
  const run = runResult.rows[0];
  if (run === undefined) return undefined;
  const callResult = await db.query<{
    tool: string;
    args: Record<string, unknown> | null;
    result_summary: string | null;
    success: boolean;
    error: string | null;
    duration_ms: string | null;
    at: Date | null;
  }>(
    `SELECT tool, args, result_summary, success, error, duration_ms, at
       FROM tool_calls WHERE tenant_id = $1 AND run_id = $2 ORDER BY seq`,
    [tenantId, runId],
  );
  return {
    tenantId,
    agentId: run.agent_id,
    runId,
    sessionId: run.session_id,
    goal: run.goal,
    status: run.status,
    startedAt: run.started_at.toISOString(),
    completedAt: run.completed_at.toISOString(),
    originTrust: run.origin_trust,
    skillPins: run.skill_pins,
    toolCalls: callResult.rows.map((row) => ({
      tool: row.tool,
      success: row.success,
      ...(row.args === null ? {} : { args: row.args }),
      ...(row.result_summary === null ? {} : { resultSummary: row.result_summary }),
      ...(row.error === null ? {} : { error: row.error }),
      ...(row.duration_ms === null ? {} : { durationMs: Number(row.duration_ms) }),
      ...(row.at === null ? {} : { at: row.at.toISOString() }),
    })),
  };
}

export interface RunWindow {
  /** Exclusive lower bound on ingestion time; null = from the beginning. */
  since: Date | null;
  /** Inclusive upper bound on ingestion time (a pass's snapshot), null = now. */
  until: Date | null;
}

export interface RunForExtraction {
  runId: string;
  status: RunStatus;
  /** Tools of the run's successful calls, in call order. */
  successfulTools: string[];
}

/** Every run of the tenant ingested in the window, with the tools of its successful calls. */
export async function selectRunsForExtraction(db: Queryable, tenantId: string, window: RunWindow): Promise<RunForExtraction[]> {
  const { rows } = await db.query<{ run_id: string; status: RunStatus; successful_tools: string[] }>(
    `SELECT r.run_id, r.status,
            coalesce(array_agg(t.tool ORDER BY t.seq) FILTER (WHERE t.success), ARRAY[]::text[]) AS successful_tools
       FROM runs r
       LEFT JOIN tool_calls t ON t.tenant_id = r.tenant_id AND t.run_id = r.run_id
      WHERE r.tenant_id = $1
        AND ($2::timestamptz IS NULL OR r.ingested_at > $2::timestamptz)
        AND ($3::timestamptz IS NULL OR r.ingested_at <= $3::timestamptz)
      GROUP BY r.run_id, r.status
      ORDER BY r.run_id`,
    [tenantId, window.since, window.until],
  );
  return rows.map(mapRow);
}

/** The goals of the given runs, by run id (a run the tenant does not have is absent). */
export async function selectRunGoals(db: Queryable, tenantId: string, runIds: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ run_id: string; goal: string }>(
    `SELECT run_id, goal FROM runs WHERE tenant_id = $1 AND run_id = ANY($2::text[])`,
    [tenantId, [...runIds]],
  );
  return new Map(rows.map((row) => [row.run_id, row.goal]));
}

export interface RunWording {
  goal: string;
  /** The run's successful calls, in order, each with its argument names. */
  calls: { tool: string; argumentNames: string[] }[];
}

/** The goals and successful calls (tool, argument names) of the given runs, by run id: what the stated-count test reads. */
export async function selectRunWording(db: Queryable, tenantId: string, runIds: readonly string[]): Promise<Map<string, RunWording>> {
  const { rows } = await db.query<{ run_id: string; goal: string; calls: RunWording['calls'] }>(
    `SELECT r.run_id, r.goal,
            coalesce(jsonb_agg(jsonb_build_object(
                       'tool', t.tool,
                       'argumentNames', CASE WHEN jsonb_typeof(t.args) = 'object'
                         THEN (SELECT coalesce(jsonb_agg(name ORDER BY name), '[]'::jsonb) FROM jsonb_object_keys(t.args) name)
                         ELSE '[]'::jsonb END) ORDER BY t.seq) FILTER (WHERE t.success), '[]'::jsonb) AS calls
       FROM runs r
       LEFT JOIN tool_calls t ON t.tenant_id = r.tenant_id AND t.run_id = r.run_id
      WHERE r.tenant_id = $1 AND r.run_id = ANY($2::text[])
      GROUP BY r.run_id, r.goal`,
    [tenantId, [...runIds]],
  );
  return new Map(rows.map((row) => [row.run_id, { goal: row.goal, calls: row.calls }]));
}

/** The database's clock: windows are cut on the same clock that stamps `ingested_at`. */
export async function databaseNow(db: Queryable): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return rows[0]?.now ?? new Date();
}
