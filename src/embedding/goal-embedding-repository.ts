import pgvector from 'pgvector';
import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import { EmbeddingDimensionMismatch, TenantModelsChanged } from './embedding-errors.ts';

/**
 * The only module with SQL for `goal_embeddings`, `embedding_models` (schema/003) and the
 * per-text cache `goal_text_embeddings` (schema/011).
 * Vectors travel as pgvector text (`toSql` / `fromSql`) so reads do not depend on the
 * per-connection type registration having finished.
 */

export interface EmbeddingModelRecord {
  modelId: string;
  dimension: number;
}

/**
 * Records (tenant, model, dimension), or checks it against what is recorded. A tenant's stored
 * embeddings all share one dimension: a model (the same id, or another) whose dimension differs
 * from the stored one is refused with `EmbeddingDimensionMismatch` naming both.
 */
export async function ensureEmbeddingModel(db: Queryable, tenantId: string, model: EmbeddingModelRecord): Promise<void> {
  await db.query(
    `INSERT INTO embedding_models (tenant_id, model_id, dimension)
     SELECT $1, $2, $3
      WHERE NOT EXISTS (SELECT 1 FROM embedding_models WHERE tenant_id = $1 AND dimension <> $3)
     ON CONFLICT (tenant_id, model_id) DO NOTHING`,
    [tenantId, model.modelId, model.dimension],
  );
  const { rows } = await db.query<{ model_id: string; dimension: number }>(
    `SELECT model_id, dimension FROM embedding_models
      WHERE tenant_id = $1 AND (model_id = $2 OR dimension <> $3)
      ORDER BY (model_id = $2) DESC, created_at, model_id
      LIMIT 1`,
    [tenantId, model.modelId, model.dimension],
  );
  const stored = rows[0];
  if (!stored) {
    throw new Error(`embedding model ${model.modelId} was not recorded for tenant ${tenantId}`);
  }
  if (stored.dimension !== model.dimension) {
    throw new EmbeddingDimensionMismatch(
      model.modelId,
      stored.dimension,
      model.dimension,
      `tenant ${tenantId} stores ${stored.dimension}-d embeddings of ${stored.model_id}`,
    );
  }
}

export async function listEmbeddingModels(db: Queryable, tenantId: string): Promise<EmbeddingModelRecord[]> {
  const { rows } = await db.query<{ model_id: string; dimension: number }>(
    'SELECT model_id, dimension FROM embedding_models WHERE tenant_id = $1 ORDER BY model_id',
    [tenantId],
  );
  return rows.map(mapRow);
}

/**
 * The order of a tenant's embedding models, the most recently recorded first. Recall's statement
 * reads the same list in the same order and compares it element by element, so both use this.
 */
export const TENANT_MODELS_ORDER = 'created_at DESC, model_id';

/** The tenant's embedding models in {@link TENANT_MODELS_ORDER} (none: nothing embedded yet). */
export async function tenantEmbeddingModels(db: Queryable, tenantId: string): Promise<EmbeddingModelRecord[]> {
  const { rows } = await db.query<{ model_id: string; dimension: number }>(
    `SELECT model_id, dimension FROM embedding_models WHERE tenant_id = $1 ORDER BY ${TENANT_MODELS_ORDER}`,
    [tenantId],
  );
  return rows.map(mapRow);
}

/**
 * Fails with TenantModelsChanged when the tenant's models are no longer `expected` (the ones a
 * kept recall configuration was decided from). `fromStatement` is the list a statement read in its
 * own snapshot ({@link TENANT_MODELS_ORDER}); when it returned no row there is none, and they are read.
 */
export async function checkTenantModels(
  db: Queryable,
  tenantId: string,
  expected: readonly string[],
  fromStatement: readonly string[] | undefined,
): Promise<void> {
  const found = fromStatement ?? (await tenantEmbeddingModels(db, tenantId)).map((model) => model.modelId);
  const same = expected.length === found.length && expected.every((model, index) => model === found[index]);
  if (!same) throw new TenantModelsChanged(tenantId, expected, found);
}

/** Every embedding model some tenant is embedded with (what a serving stack must be able to load). */
export async function embeddingModelsInUse(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ model_id: string }>('SELECT DISTINCT model_id FROM embedding_models ORDER BY model_id');
  return rows.map((row) => row.model_id);
}

export interface GoalToEmbed {
  runId: string;
  goal: string;
}

export interface RunSelection {
  /** Only these runs; undefined = every run of the tenant. */
  runIds?: string[] | undefined;
}

/** Runs with no embedding for the model yet, by run id, one page at a time (keyset on run_id). */
export async function findGoalsWithoutEmbedding(
  db: Queryable,
  tenantId: string,
  modelId: string,
  page: RunSelection & { afterRunId?: string | null; limit: number },
): Promise<GoalToEmbed[]> {
  const { rows } = await db.query<{ run_id: string; goal: string }>(
    `SELECT r.run_id, r.goal
       FROM runs r
      WHERE r.tenant_id = $1
        AND ($3::text[] IS NULL OR r.run_id = ANY($3::text[]))
        AND ($4::text IS NULL OR r.run_id > $4::text)
        AND NOT EXISTS (
          SELECT 1 FROM goal_embeddings e
           WHERE e.tenant_id = r.tenant_id AND e.run_id = r.run_id AND e.model_id = $2)
      ORDER BY r.run_id
      LIMIT $5`,
    [tenantId, modelId, page.runIds ?? null, page.afterRunId ?? null, page.limit],
  );
  return rows.map(mapRow);
}

export async function countGoalsWithoutEmbedding(
  db: Queryable,
  tenantId: string,
  modelId: string,
  selection: RunSelection = {},
): Promise<number> {
  const { rows } = await db.query<{ count: string }>(
    `SELECT count(*) AS count
       FROM runs r
      WHERE r.tenant_id = $1
        AND ($3::text[] IS NULL OR r.run_id = ANY($3::text[]))
        AND NOT EXISTS (
          SELECT 1 FROM goal_embeddings e
           WHERE e.tenant_id = r.tenant_id AND e.run_id = r.run_id AND e.model_id = $2)`,
    [tenantId, modelId, selection.runIds ?? null],
  );
  return Number(rows[0]?.count ?? 0);
}

function requireDimension(model: EmbeddingModelRecord, embedding: Float32Array, what: string): void {
  if (embedding.length !== model.dimension) throw new EmbeddingDimensionMismatch(model.modelId, model.dimension, embedding.length, what);
}

export interface GoalEmbedding {
  runId: string;
  embedding: Float32Array;
}

/**
 * The one bulk insert of both embedding tables: rows keyed by `keyColumn` for a tenant and model,
 * idempotent (an existing key keeps its vector), every vector checked against the model's
 * dimension first. Returns the number of rows written.
 */
async function insertKeyedVectors(
  db: Queryable,
  target: { table: 'goal_embeddings' | 'goal_text_embeddings'; keyColumn: 'run_id' | 'text_hash'; describe: (key: string) => string },
  tenantId: string,
  model: EmbeddingModelRecord,
  rows: { key: string; embedding: Float32Array }[],
): Promise<number> {
  if (rows.length === 0) return 0;
  for (const { key, embedding } of rows) requireDimension(model, embedding, target.describe(key));
  const { table, keyColumn } = target;
  const result = await db.query(
    `INSERT INTO ${table} (tenant_id, ${keyColumn}, model_id, dimension, embedding)
     SELECT $1, input.key, $2, $3, input.embedding::vector
       FROM unnest($4::text[], $5::text[]) AS input (key, embedding)
     ON CONFLICT (tenant_id, ${keyColumn}, model_id) DO NOTHING`,
    [
      tenantId,
      model.modelId,
      model.dimension,
      rows.map((row) => row.key),
      rows.map((row) => pgvector.toSql(Array.from(row.embedding)) as string),
    ],
  );
  return result.rowCount ?? 0;
}

/**
 * Stores embeddings (idempotent: an existing (tenant, run, model) row is kept). The model must
 * have been recorded with `ensureEmbeddingModel`; every vector must have its dimension.
 * Returns the number of rows written.
 */
export function insertGoalEmbeddings(
  db: Queryable,
  tenantId: string,
  model: EmbeddingModelRecord,
  embeddings: GoalEmbedding[],
): Promise<number> {
  return insertKeyedVectors(
    db,
    { table: 'goal_embeddings', keyColumn: 'run_id', describe: (runId) => `goal of run ${runId}` },
    tenantId,
    model,
    embeddings.map(({ runId, embedding }) => ({ key: runId, embedding })),
  );
}

export interface GoalTextEmbedding {
  /** `goalTextHash` of the normalised goal text (goal-text.ts). */
  textHash: string;
  embedding: Float32Array;
}

/** The cached vectors of these goal texts for a model, by text hash (absent = never embedded). */
export async function findGoalTextEmbeddings(
  db: Queryable,
  tenantId: string,
  modelId: string,
  textHashes: string[],
): Promise<Map<string, Float32Array>> {
  const found = new Map<string, Float32Array>();
  if (textHashes.length === 0) return found;
  const { rows } = await db.query<{ text_hash: string; embedding: string }>(
    `SELECT text_hash, embedding::text AS embedding
       FROM goal_text_embeddings
      WHERE tenant_id = $1 AND model_id = $2 AND text_hash = ANY($3::text[])`,
    [tenantId, modelId, textHashes],
  );
  for (const row of rows) found.set(row.text_hash, Float32Array.from(pgvector.fromSql(row.embedding) as number[]));
  return found;
}

/** Caches the vectors of goal texts (idempotent: a text already cached keeps its vector). */
export async function insertGoalTextEmbeddings(
  db: Queryable,
  tenantId: string,
  model: EmbeddingModelRecord,
  embeddings: GoalTextEmbedding[],
): Promise<void> {
  await insertKeyedVectors(
    db,
    { table: 'goal_text_embeddings', keyColumn: 'text_hash', describe: (textHash) => `goal text ${textHash}` },
    tenantId,
    model,
    embeddings.map(({ textHash, embedding }) => ({ key: textHash, embedding })),
  );
}

export interface LoadedGoalEmbeddings {
  runIds: string[];
  vectors: Float32Array[];
}

/** The stored embeddings of a model, ordered by run id, read in pages to bound memory. */
export async function loadGoalEmbeddings(
  db: Queryable,
  tenantId: string,
  modelId: string,
  selection: RunSelection & { pageSize?: number } = {},
): Promise<LoadedGoalEmbeddings> {
  const pageSize = selection.pageSize ?? 5000;
  const runIds: string[] = [];
  const vectors: Float32Array[] = [];
  let afterRunId: string | null = null;
  for (;;) {
    const { rows }: { rows: { run_id: string; embedding: string }[] } = await db.query(
      `SELECT run_id, embedding::text AS embedding
         FROM goal_embeddings
        WHERE tenant_id = $1 AND model_id = $2
          AND ($3::text[] IS NULL OR run_id = ANY($3::text[]))
          AND ($4::text IS NULL OR run_id > $4::text)
        ORDER BY run_id
        LIMIT $5`,
      [tenantId, modelId, selection.runIds ?? null, afterRunId, pageSize],
    );
    for (const row of rows) {
      runIds.push(row.run_id);
      vectors.push(Float32Array.from(pgvector.fromSql(row.embedding) as number[]));
    }
    if (rows.length < pageSize) break;
    afterRunId = rows[rows.length - 1]!.run_id;
  }
  return { runIds, vectors };
}

/** The mean of the stored goal embeddings of `runIds` for a model (the centroid of what they were for); null when none is stored. */
export async function meanGoalEmbedding(db: Queryable, tenantId: string, modelId: string, runIds: string[]): Promise<Float32Array | null> {
  const { rows } = await db.query<{ mean: string | null }>(
    `SELECT avg(embedding)::text AS mean FROM goal_embeddings WHERE tenant_id = $1 AND model_id = $2 AND run_id = ANY($3::text[])`,
    [tenantId, modelId, runIds],
  );
  const mean = rows[0]?.mean;
  return mean ? Float32Array.from(pgvector.fromSql(mean) as number[]) : null;
}

/**
 * Forgets every goal embedding (and model record) of the tenant made by a model other than
 * `keepModelId`: the explicit first half of `skillsmith reembed`. Returns how many were dropped.
 */
export async function forgetOtherModels(db: Queryable, tenantId: string, keepModelId: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM goal_embeddings WHERE tenant_id = $1 AND model_id <> $2', [tenantId, keepModelId]);
  await db.query('DELETE FROM goal_text_embeddings WHERE tenant_id = $1 AND model_id <> $2', [tenantId, keepModelId]);
  await db.query('DELETE FROM embedding_models WHERE tenant_id = $1 AND model_id <> $2', [tenantId, keepModelId]);
  return rowCount ?? 0;
}
