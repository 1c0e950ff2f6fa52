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
  kind: string;
  reason: string | null;
  count: number;
}

/** Event counts per (kind, reason) for one tenant — the basis of `skillsmith metrics`. */
export async function countSkillEvents(db: Queryable, tenantId: string): Promise<SkillEventCount[]> {
  const result = await db.query<{ kind: string; reason: string | null; count: string }>(
    `SELECT kind, reason, count(*)::text AS count FROM skill_events WHERE tenant_id = $1
     GROUP BY kind, reason ORDER BY kind, reason`,
    [tenantId],
  );
  return result.rows.map((row) => ({ kind: row.kind, reason: row.reason, count: Number(row.count) }));
}

/** Event counts per skill name for one kind (e.g. `skill.load`), most frequent first. */
export async function countSkillEventsByName(
  db: Queryable,
  tenantId: string,
  kind: string,
): Promise<Array<{ name: string; count: number }>> {
  const result = await db.query<{ name: string; count: string }>(
    `SELECT name, count(*)::text AS count FROM skill_events WHERE tenant_id = $1 AND kind = $2 AND name IS NOT NULL
     GROUP BY name ORDER BY count(*) DESC, name`,
    [tenantId, kind],
  );
  return result.rows.map((row) => ({ name: row.name, count: Number(row.count) }));
}
