import type { Queryable } from './database.ts';
import { mapRow } from './row-mapping.ts';

/**
 * SkillEventRepository: the only module with SQL for `skill_events` — the tracked metrics
 * of the skill substrate. Kinds are dotted (`authoring.denied`, `authoring.conflict`,
 * `approval.requested`, `skill.load`, …); `reason` carries the denial reason or the
 * resolution, `detail` anything else. Generic on purpose: sessions record loads here too.
 */
export interface SkillEventInput {
  kind: string;
  sessionId?: string | null;
  runId?: string | null;
  invocationId?: string | null;
  name?: string | null;
  revision?: number | null;
  reason?: string | null;
  detail?: Record<string, unknown>;
}

export interface SkillEvent {
  id: number;
  tenantId: string;
  sessionId: string | null;
  runId: string | null;
  invocationId: string | null;
  kind: string;
  name: string | null;
  revision: number | null;
  reason: string | null;
  detail: Record<string, unknown>;
  at: Date;
}

interface SkillEventRow {
  id: string;
  tenant_id: string;
  session_id: string | null;
  run_id: string | null;
  invocation_id: string | null;
  kind: string;
  name: string | null;
  revision: number | null;
  reason: string | null;
  detail: Record<string, unknown>;
  at: Date;
}

function toEvent(row: SkillEventRow): SkillEvent {
  return { ...mapRow(row), id: Number(row.id) };
}

export async function recordSkillEvent(db: Queryable, tenantId: string, event: SkillEventInput): Promise<SkillEvent> {
  const result = await db.query<SkillEventRow>(
    `INSERT INTO skill_events (tenant_id, session_id, run_id, invocation_id, kind, name, revision, reason, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     RETURNING id::text AS id, tenant_id, session_id, run_id, invocation_id, kind, name, revision, reason, detail, at`,
    [
      tenantId,
      event.sessionId ?? null,
      event.runId ?? null,
      event.invocationId ?? null,
      event.kind,
      event.name ?? null,
      event.revision ?? null,
      event.reason ?? null,
      JSON.stringify(event.detail ?? {}),
    ],
  );
  return toEvent(result.rows[0]!);
}

export interface SkillEventFilter {
  kind?: string;
  runId?: string;
  invocationId?: string;
  name?: string;
}

/** A tenant's events, oldest first, optionally narrowed by kind, run, invocation or skill name. */
export async function listSkillEvents(db: Queryable, tenantId: string, filter: SkillEventFilter = {}): Promise<SkillEvent[]> {
  const result = await db.query<SkillEventRow>(
    `SELECT id::text AS id, tenant_id, session_id, run_id, invocation_id, kind, name, revision, reason, detail, at
     FROM skill_events
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR kind = $2)
       AND ($3::text IS NULL OR run_id = $3)
       AND ($4::text IS NULL OR invocation_id = $4)
       AND ($5::text IS NULL OR name = $5)
     ORDER BY id`,
    [tenantId, filter.kind ?? null, filter.runId ?? null, filter.invocationId ?? null, filter.name ?? null],
  );
  return result.rows.map(toEvent);
}

export interface SkillEventCount {
  tenantId: string;
  kind: string;
  reason: string | null;
  count: number;
}

/** Event counts per (tenant, kind, reason) for one tenant or every tenant (`null`) — the basis of `skillsmith metrics`. */
export async function countSkillEvents(db: Queryable, tenantId: string | null): Promise<SkillEventCount[]> {
  const result = await db.query<{ tenant_id: string; kind: string; reason: string | null; count: string }>(
    `SELECT tenant_id, kind, reason, count(*)::text AS count FROM skill_events WHERE ($1::text IS NULL OR tenant_id = $1)
     GROUP BY tenant_id, kind, reason ORDER BY tenant_id, kind, reason`,
    [tenantId],
  );
  return result.rows.map((row) => ({ tenantId: row.tenant_id, kind: row.kind, reason: row.reason, count: Number(row.count) }));
}

export interface SkillLoadCount {
  tenantId: string;
  name: string;
  /** `skill.load` events (a repeated load of a loaded body counts again). */
  loads: number;
  /** Distinct sessions that loaded the skill. */
  sessions: number;
  /** Runs reported with the `sessionId` of such a session, and how many of them completed. */
  runs: number;
  completedRuns: number;
}

/**
 * Loads per skill with the outcome of the runs that loaded it: a run is linked to a load by its
 * reported `sessionId` being the session's id. Runs are read only for sessions that loaded
 * something (index runs_tenant_session), so the cost follows the loads, not the run table.
 */
export async function countSkillLoads(db: Queryable, tenantId: string | null): Promise<SkillLoadCount[]> {
  const result = await db.query<{
    tenant_id: string;
    name: string;
    loads: string;
    sessions: string;
    runs: string;
    completed: string;
  }>(
    `WITH loads AS (
       SELECT tenant_id, name, session_id, count(*) AS loads FROM skill_events
        WHERE kind = 'skill.load' AND name IS NOT NULL AND ($1::text IS NULL OR tenant_id = $1)
        GROUP BY tenant_id, name, session_id),
     session_runs AS (
       SELECT r.tenant_id, r.session_id, count(*) AS runs, count(*) FILTER (WHERE r.status = 'completed') AS completed
         FROM runs r
        WHERE (r.tenant_id, r.session_id) IN (SELECT tenant_id, session_id FROM loads WHERE session_id IS NOT NULL)
        GROUP BY r.tenant_id, r.session_id)
     SELECT l.tenant_id, l.name, sum(l.loads)::text AS loads, count(l.session_id)::text AS sessions,
            coalesce(sum(s.runs), 0)::text AS runs, coalesce(sum(s.completed), 0)::text AS completed
       FROM loads l LEFT JOIN session_runs s ON s.tenant_id = l.tenant_id AND s.session_id = l.session_id
      GROUP BY l.tenant_id, l.name
      ORDER BY l.tenant_id, sum(l.loads) DESC, l.name`,
    [tenantId],
  );
  return result.rows.map((row) => ({
    tenantId: row.tenant_id,
    name: row.name,
    loads: Number(row.loads),
    sessions: Number(row.sessions),
    runs: Number(row.runs),
    completedRuns: Number(row.completed),
  }));
}
