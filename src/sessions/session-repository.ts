import type pg from 'pg';
import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import type { SkillSource, TrustLevel } from '../skills/skill-revision.ts';
import type { DroppedEntry } from './catalog.ts';

/**
 * SessionRepository: the only module with SQL for `sessions`. Everything but the loaded bodies is
 * fixed at open; `loaded` changes only through a compare-and-swap on `loaded_version`.
 */

/** A pin as the session records it: the SkillPin plus the metadata its catalog entry rendered. */
export interface SessionPin {
  name: string;
  revision: number;
  contentSha256: string;
  source: SkillSource;
  trust: TrustLevel;
  version: string;
  description: string;
  requiredTools: string[];
}

/** An MCP prompt exactly as it arrived at open: a read-only, session-scoped skill (revision 0). */
export interface SessionMcpPrompt {
  server: string;
  name: string;
  /** The catalog name: `<server>/<name>`. */
  skillName: string;
  description: string;
  text: string;
  contentSha256: string;
}

/** One loaded item: a body (path null) or a package member. */
export interface LoadedItem {
  name: string;
  path: string | null;
  revision: number;
  tokens: number;
  contentSha256: string;
}

export interface Session {
  tenantId: string;
  id: string;
  agentId: string;
  agentSpecVersion: number;
  tools: string[];
  pins: SessionPin[];
  catalog: string;
  catalogSha256: string;
  dropped: DroppedEntry[];
  mcpPrompts: SessionMcpPrompt[];
  loaded: LoadedItem[];
  loadedVersion: number;
  createdAt: Date;
}

export type SessionWrite = Omit<Session, 'id' | 'loaded' | 'loadedVersion' | 'createdAt' | 'tenantId'>;

interface SessionRow {
  tenant_id: string;
  id: string;
  agent_id: string;
  agent_spec_version: number;
  tools: string[];
  pins: SessionPin[];
  catalog: string;
  catalog_sha256: string;
  dropped: DroppedEntry[];
  mcp_prompts: SessionMcpPrompt[];
  loaded: LoadedItem[];
  loaded_version: number;
  created_at: Date;
}

const COLUMNS = `tenant_id, id::text AS id, agent_id, agent_spec_version, tools, pins, catalog, catalog_sha256, dropped,
  mcp_prompts, loaded, loaded_version, created_at`;

const toSession = (row: SessionRow): Session => mapRow(row);

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function insertSession(db: pg.PoolClient | pg.Pool, tenantId: string, write: SessionWrite): Promise<Session> {
  const { rows } = await db.query<SessionRow>(
    `INSERT INTO sessions (tenant_id, agent_id, agent_spec_version, tools, pins, catalog, catalog_sha256, dropped, mcp_prompts)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     RETURNING ${COLUMNS}`,
    [
      tenantId,
      write.agentId,
      write.agentSpecVersion,
      JSON.stringify(write.tools),
      JSON.stringify(write.pins),
      write.catalog,
      write.catalogSha256,
      JSON.stringify(write.dropped),
      JSON.stringify(write.mcpPrompts),
    ],
  );
  return toSession(rows[0]!);
}

/** The session, or undefined when this tenant has none with that id (another tenant's id included). */
export async function findSession(db: Queryable, tenantId: string, sessionId: string): Promise<Session | undefined> {
  if (!UUID_PATTERN.test(sessionId)) return undefined;
  const { rows } = await db.query<SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE tenant_id = $1 AND id = $2::uuid`, [
    tenantId,
    sessionId,
  ]);
  return rows[0] ? toSession(rows[0]) : undefined;
}

/** Replaces `loaded` if nobody changed it since `expectedVersion`; false when someone did. */
export async function compareAndSetLoaded(
  db: Queryable,
  tenantId: string,
  sessionId: string,
  expectedVersion: number,
  loaded: readonly LoadedItem[],
): Promise<boolean> {
  const result = await db.query(
    `UPDATE sessions SET loaded = $4, loaded_version = loaded_version + 1
     WHERE tenant_id = $1 AND id = $2::uuid AND loaded_version = $3`,
    [tenantId, sessionId, expectedVersion, JSON.stringify(loaded)],
  );
  return result.rowCount === 1;
}

export async function countSessions(db: Queryable, tenantId: string): Promise<number> {
  const { rows } = await db.query<{ count: string }>(`SELECT count(*)::text AS count FROM sessions WHERE tenant_id = $1`, [tenantId]);
  return Number(rows[0]?.count ?? 0);
}

export interface SessionCatalogSummary {
  tenantId: string;
  sessions: number;
  /** Catalog entries the caps removed, summed over sessions (the 002 spec's catalog drop count). */
  droppedEntries: number;
  sessionsWithDrops: number;
  /** Sessions whose pinned catalog held at least one skill … */
  sessionsWithCatalog: number;
  /** … and of those, the ones in which skill.load was called at all (the selection rate's numerator). */
  sessionsWithLoad: number;
}

/** Per tenant (or for one): sessions, catalog drops and skill selection — one aggregate over `sessions`. */
export async function summarizeSessionCatalogs(db: Queryable, tenantId: string | null): Promise<SessionCatalogSummary[]> {
  const { rows } = await db.query<{
    tenant_id: string;
    sessions: string;
    dropped: string;
    with_drops: string;
    with_catalog: string;
    with_load: string;
  }>(
    `SELECT s.tenant_id, count(*)::text AS sessions,
            coalesce(sum(jsonb_array_length(s.dropped)), 0)::text AS dropped,
            count(*) FILTER (WHERE jsonb_array_length(s.dropped) > 0)::text AS with_drops,
            count(*) FILTER (WHERE jsonb_array_length(s.pins) > 0)::text AS with_catalog,
            count(*) FILTER (WHERE jsonb_array_length(s.pins) > 0 AND EXISTS (
              SELECT 1 FROM skill_events e
               WHERE e.tenant_id = s.tenant_id AND e.session_id = s.id::text AND e.kind = 'skill.load'))::text AS with_load
       FROM sessions s WHERE ($1::text IS NULL OR s.tenant_id = $1)
      GROUP BY s.tenant_id ORDER BY s.tenant_id`,
    [tenantId],
  );
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    sessions: Number(row.sessions),
    droppedEntries: Number(row.dropped),
    sessionsWithDrops: Number(row.with_drops),
    sessionsWithCatalog: Number(row.with_catalog),
    sessionsWithLoad: Number(row.with_load),
  }));
}
