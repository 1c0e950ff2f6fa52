import type pg from 'pg';
import pgvector from 'pgvector';
import { EmbeddingDimensionMismatch } from '../embedding/embedding-errors.ts';
import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import type { ConsensusStep, Procedure, ScoredProcedure } from './procedure.ts';
import { SkillsmithError } from '../skillsmith-error.ts';

/**
 * The `procedures` table: one row per learned skill, holding its track record (success and
 * attempt counts, provenance, enabled, superseded_by) and the embedding of its when_to_use.
 * The only module with SQL for this table.
 */

interface ProcedureRow {
  id: string;
  tenant_id: string;
  skill_id: string;
  name: string;
  revision: number;
  when_to_use: string;
  tool_sequence: ConsensusStep[];
  tools_required: string[];
  success_count: number;
  attempt_count: number;
  provenance: Procedure['provenance'];
  enabled: boolean;
  superseded_by: string | null;
  embedding_model: string;
  embedding_dimension: number;
  created_at: Date;
  last_used_at: Date | null;
  observed_attempts: number;
  observed_successes: number;
}

const COLUMNS = `id, tenant_id, skill_id, name, revision, when_to_use, tool_sequence, tools_required, success_count,
  attempt_count, provenance, enabled, superseded_by, embedding_model, embedding_dimension, created_at, last_used_at,
  observed_attempts, observed_successes`;

const toProcedure = (row: ProcedureRow): Procedure => mapRow(row);

function checkedDimension(dimension: number): number {
  // Interpolated into DDL and casts below, so it must be a plain positive integer.
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > 16_000) throw new Error(`invalid vector dimension ${dimension}`);
  return dimension;
}

/**
 * HNSW (cosine) over `embedding` cast to its dimension, one partial index per dimension in use:
 * the column is dimensionless so that the configured model decides, and an index needs one.
 */
export async function ensureProcedureIndex(db: Queryable, dimension: number): Promise<void> {
  const d = checkedDimension(dimension);
  await db.query(
    `CREATE INDEX IF NOT EXISTS procedures_embedding_hnsw_${d} ON procedures
       USING hnsw ((embedding::vector(${d})) vector_cosine_ops) WHERE embedding_dimension = ${d}`,
  );
}

/** Refuses a model whose vectors differ in dimension from the procedures already stored for the tenant. */
export async function checkProcedureModel(db: Queryable, tenantId: string, modelId: string, dimension: number): Promise<void> {
  const { rows } = await db.query<{ embedding_model: string; embedding_dimension: number }>(
    `SELECT DISTINCT embedding_model, embedding_dimension FROM procedures WHERE tenant_id = $1`,
    [tenantId],
  );
  const other = rows.find((row) => row.embedding_dimension !== dimension);
  if (other) {
    throw new EmbeddingDimensionMismatch(
      modelId,
      other.embedding_dimension,
      dimension,
      `procedures of tenant ${tenantId} were embedded with ${other.embedding_model}`,
    );
  }
}

export interface NearestOptions {
  limit: number;
  /** Only enabled procedures that no other supersedes (recall); reconcile sees them all. */
  recallableOnly: boolean;
}

export async function findNearestProcedures(
  db: Queryable,
  tenantId: string,
  embedding: Float32Array,
  options: NearestOptions,
): Promise<ScoredProcedure[]> {
  const d = checkedDimension(embedding.length);
  const { rows } = await db.query<ProcedureRow & { score: number }>(
    `SELECT ${COLUMNS}, 1 - (embedding::vector(${d}) <=> $2::vector(${d})) AS score
       FROM procedures
      WHERE tenant_id = $1 AND embedding_dimension = ${d}
        ${options.recallableOnly ? 'AND enabled AND superseded_by IS NULL' : ''}
      ORDER BY embedding::vector(${d}) <=> $2::vector(${d})
      LIMIT $3`,
    [tenantId, pgvector.toSql(Array.from(embedding)), options.limit],
  );
  return rows.map((row) => ({ ...toProcedure(row), score: Number(row.score) }));
}

export async function findProcedureByName(db: Queryable, tenantId: string, name: string): Promise<Procedure | undefined> {
  const { rows } = await db.query<ProcedureRow>(`SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 AND name = $2`, [
    tenantId,
    name,
  ]);
  return rows[0] ? toProcedure(rows[0]) : undefined;
}

export async function listProcedures(db: Queryable, tenantId: string): Promise<Procedure[]> {
  const { rows } = await db.query<ProcedureRow>(`SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 ORDER BY name`, [tenantId]);
  return rows.map(toProcedure);
}

export type ProcedureWrite = Pick<
  Procedure,
  'skillId' | 'name' | 'revision' | 'whenToUse' | 'toolSequence' | 'toolsRequired' | 'successCount' | 'attemptCount' | 'embeddingModel'
> & { fromSessions: string[]; embedding: Float32Array };

/** The content and track-record columns a write sets, in the order both statements below use. */
function contentParameters(write: ProcedureWrite): unknown[] {
  return [
    write.revision,
    write.whenToUse,
    JSON.stringify(write.toolSequence),
    JSON.stringify(write.toolsRequired),
    write.successCount,
    write.attemptCount,
    JSON.stringify({ source: 'synthesized', from_sessions: write.fromSessions }),
    pgvector.toSql(Array.from(write.embedding)),
    write.embeddingModel,
    write.embedding.length,
  ];
}

export async function insertProcedure(db: pg.PoolClient, tenantId: string, write: ProcedureWrite): Promise<Procedure> {
  const { rows } = await db.query<ProcedureRow>(
    `INSERT INTO procedures (tenant_id, skill_id, name, revision, when_to_use, tool_sequence, tools_required,
       success_count, attempt_count, provenance, embedding, embedding_model, embedding_dimension)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     RETURNING ${COLUMNS}`,
    [tenantId, write.skillId, write.name, ...contentParameters(write)],
  );
  return toProcedure(rows[0]!);
}

/** A new revision of the same skill: content fields and the merged track record change, identity does not. */
export async function updateProcedure(db: pg.PoolClient, tenantId: string, id: string, write: ProcedureWrite): Promise<void> {
  await db.query(
    `UPDATE procedures SET revision = $3, when_to_use = $4, tool_sequence = $5, tools_required = $6,
       success_count = $7, attempt_count = $8, provenance = $9, embedding = $10, embedding_model = $11,
       embedding_dimension = $12, updated_at = now()
     WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, ...contentParameters(write)],
  );
}

export async function markSuperseded(db: pg.PoolClient, tenantId: string, weakerId: string, strongerId: string): Promise<void> {
  await db.query(`UPDATE procedures SET superseded_by = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2`, [
    tenantId,
    weakerId,
    strongerId,
  ]);
}

export class ProcedureNotFound extends SkillsmithError {
  static override readonly code = 'ProcedureNotFound';
}

export async function setProcedureEnabled(db: Queryable, tenantId: string, name: string, enabled: boolean): Promise<Procedure> {
  const { rows } = await db.query<ProcedureRow>(
    // Re-enabling starts a fresh observation window, so the old failures do not disable it again at once.
    `UPDATE procedures SET enabled = $3, updated_at = now(),
        observed_attempts = CASE WHEN $3 THEN 0 ELSE observed_attempts END,
        observed_successes = CASE WHEN $3 THEN 0 ELSE observed_successes END
      WHERE tenant_id = $1 AND name = $2 RETURNING ${COLUMNS}`,
    [tenantId, name, enabled],
  );
  if (!rows[0]) throw new ProcedureNotFound(`no procedure named ${JSON.stringify(name)} in tenant ${tenantId}`);
  return toProcedure(rows[0]);
}

export async function touchProcedures(db: Queryable, tenantId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(`UPDATE procedures SET last_used_at = now() WHERE tenant_id = $1 AND id = ANY($2::uuid[])`, [tenantId, ids]);
}

export async function findProceduresByName(db: Queryable, tenantId: string, names: string[]): Promise<Procedure[]> {
  if (names.length === 0) return [];
  const { rows } = await db.query<ProcedureRow>(`SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 AND name = ANY($2::text[])`, [
    tenantId,
    names,
  ]);
  return rows.map(toProcedure);
}

/**
 * One run's outcome for one procedure: attempt_count +1, success_count +1 on success, the
 * observed window likewise, last_used_at. Idempotent per (run, procedure): returns the updated
 * procedure, or undefined when this run was already counted.
 */
export async function observeProcedure(
  db: pg.PoolClient,
  tenantId: string,
  observation: { runId: string; procedureId: string; success: boolean; via: 'pinned' | 'recalled' },
): Promise<Procedure | undefined> {
  const inserted = await db.query(
    `INSERT INTO procedure_observations (tenant_id, run_id, procedure_id, success, via) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING`,
    [tenantId, observation.runId, observation.procedureId, observation.success, observation.via],
  );
  if (inserted.rowCount === 0) return undefined;
  const successes = observation.success ? 1 : 0;
  const { rows } = await db.query<ProcedureRow>(
    `UPDATE procedures SET attempt_count = attempt_count + 1, success_count = success_count + $3,
        observed_attempts = observed_attempts + 1, observed_successes = observed_successes + $3, last_used_at = now()
      WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [tenantId, observation.procedureId, successes],
  );
  return rows[0] ? toProcedure(rows[0]) : undefined;
}

export async function hasProcedures(db: Queryable, tenantId: string): Promise<boolean> {
  const { rowCount } = await db.query(`SELECT 1 FROM procedures WHERE tenant_id = $1 LIMIT 1`, [tenantId]);
  return (rowCount ?? 0) > 0;
}

/** Re-embeds one procedure's when_to_use with another model (`skillsmith reembed`). */
export async function replaceProcedureEmbedding(
  db: Queryable,
  tenantId: string,
  id: string,
  embedding: Float32Array,
  embeddingModel: string,
): Promise<void> {
  await db.query(
    `UPDATE procedures SET embedding = $3, embedding_model = $4, embedding_dimension = $5, updated_at = now()
      WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, pgvector.toSql(Array.from(embedding)), embeddingModel, embedding.length],
  );
}
