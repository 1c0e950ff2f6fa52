import pgvector from 'pgvector';
import { checkTenantModels, TENANT_MODELS_ORDER } from '../embedding/goal-embedding-repository.ts';
import { isEmbeddedDatabase, type Queryable } from '../store/database.ts';
import { vectorParameter } from '../store/vector-parameter.ts';
import { ACCEPTANCE_CAP, ACCEPTANCE_SAMPLE, loosestNearest } from './recall-acceptance.ts';

/**
 * The `procedure_goal_vectors` table: what each procedure is for, as recall searches it — one
 * vector per goal of a successful run the procedure counted, and one for its when_to_use, with
 * their text for full-text match. The only module with SQL for this table.
 */

/** A vector dimension fit to be interpolated into SQL: a plain positive integer (the recall space's read checks it too). */
export function checkedDimension(dimension: number): number {
  // Interpolated into DDL and casts below, so it must be a plain positive integer.
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > 16_000) throw new Error(`invalid vector dimension ${dimension}`);
  return dimension;
}

/**
 * HNSW (cosine) over `embedding` cast to its dimension, one partial index per dimension in use:
 * the column is dimensionless so that the configured model decides, and an index needs one.
 */
export async function ensureRecallIndex(db: Queryable, dimension: number): Promise<void> {
  const d = checkedDimension(dimension);
  await db.query(
    `CREATE INDEX IF NOT EXISTS procedure_goal_vectors_hnsw_${d} ON procedure_goal_vectors
       USING hnsw ((embedding::vector(${d})) vector_cosine_ops) WHERE dimension = ${d}`,
  );
}

/** A procedure's when_to_use as recall searches it (written with the procedure row; replaces the previous one). */
export async function storeWhenToUseVector(
  db: Queryable,
  tenantId: string,
  procedureId: string,
  whenToUse: { text: string; embedding: Float32Array; modelId: string },
): Promise<void> {
  await db.query(
    `INSERT INTO procedure_goal_vectors (tenant_id, procedure_id, source, model_id, dimension, text, embedding)
     VALUES ($1, $2, 'when_to_use', $3, $4, $5, $6)
     ON CONFLICT (tenant_id, procedure_id, model_id, source)
       DO UPDATE SET text = EXCLUDED.text, dimension = EXCLUDED.dimension, embedding = EXCLUDED.embedding`,
    [tenantId, procedureId, whenToUse.modelId, whenToUse.embedding.length, whenToUse.text, pgvector.toSql(Array.from(whenToUse.embedding))],
  );
}

/**
 * The goal of every successful run the procedure has counted, with the vector `modelId` already
 * computed for it in goal_embeddings (inside the install transaction, after the runs are counted).
 * Idempotent.
 */
export async function storeLearnedGoalVectors(db: Queryable, tenantId: string, procedureId: string, modelId: string): Promise<void> {
  await db.query(
    `INSERT INTO procedure_goal_vectors (tenant_id, procedure_id, source, model_id, dimension, text, embedding)
     SELECT pr.tenant_id, pr.procedure_id, 'run:' || pr.run_id, g.model_id, g.dimension, r.goal, g.embedding
       FROM procedure_runs pr
       JOIN runs r ON r.tenant_id = pr.tenant_id AND r.run_id = pr.run_id
       JOIN goal_embeddings g ON g.tenant_id = pr.tenant_id AND g.run_id = pr.run_id AND g.model_id = $3
      WHERE pr.tenant_id = $1 AND pr.procedure_id = $2 AND pr.success
     ON CONFLICT DO NOTHING`,
    [tenantId, procedureId, modelId],
  );
  await storeRecallAcceptance(db, tenantId, procedureId, modelId);
}

/**
 * The procedure's own recall acceptance (src/procedures/recall-acceptance.ts), from its learned-from
 * goal vectors in `modelId`: at most ACCEPTANCE_SAMPLE distinct goal texts, the first in text order, so
 * the cost stays bounded however many runs a procedure counts.
 */
async function storeRecallAcceptance(db: Queryable, tenantId: string, procedureId: string, modelId: string): Promise<void> {
  const { rows } = await db.query<{ embedding: string }>(
    `SELECT DISTINCT ON (text) embedding::text AS embedding
       FROM procedure_goal_vectors
      WHERE tenant_id = $1 AND procedure_id = $2 AND model_id = $3 AND source LIKE 'run:%'
      ORDER BY text, source
      LIMIT ${ACCEPTANCE_SAMPLE}`,
    [tenantId, procedureId, modelId],
  );
  const goals = rows.map((row) => Float32Array.from(pgvector.fromSql(row.embedding) as number[]));
  await db.query(`UPDATE procedures SET recall_loosest = $3 WHERE tenant_id = $1 AND id = $2`, [
    tenantId,
    procedureId,
    loosestNearest(goals),
  ]);
}

/** Up to `limit` of the goal vectors a procedure was learned from in `modelId`, in source order (reconcile's evidence). */
export async function loadLearnedGoalVectors(
  db: Queryable,
  tenantId: string,
  procedureId: string,
  modelId: string,
  limit: number,
): Promise<Float32Array[]> {
  const { rows } = await db.query<{ embedding: string }>(
    `SELECT embedding::text AS embedding FROM procedure_goal_vectors
      WHERE tenant_id = $1 AND procedure_id = $2 AND model_id = $3 AND source LIKE 'run:%'
      ORDER BY source LIMIT $4`,
    [tenantId, procedureId, modelId, limit],
  );
  return rows.map((row) => Float32Array.from(pgvector.fromSql(row.embedding) as number[]));
}

/** Drops the recall vectors of every model but `modelId` (`skillsmith reembed`). */
export async function forgetOtherRecallModels(db: Queryable, tenantId: string, modelId: string): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM procedure_goal_vectors WHERE tenant_id = $1 AND model_id <> $2`, [tenantId, modelId]);
  return rowCount ?? 0;
}

export interface RecallQuery {
  /** The goal, embedded for the goal task with `modelId`. */
  embedding: Float32Array;
  modelId: string;
  /** The goal's text, for full-text match. */
  text: string;
}

export interface RecallSearchOptions {
  /** A procedure is returned only when its best cosine with the goal reaches this. */
  threshold: number;
  /**
   * And only when its best cosine over its learned goals (not the when_to_use, which is on another
   * scale) reaches the procedure's own acceptance — the loosest leave-one-out cosine among those
   * goals — less this slack; null leaves the threshold alone (calibration).
   */
  acceptanceSlack: number | null;
  limit: number;
  /** Body characters returned; `truncated` says whether there were more. */
  bodyChars: number;
  /**
   * The tenant's embedding models (most recently recorded first) the caller's configuration was
   * decided from: when the statement finds others, it fails with TenantModelsChanged instead of
   * answering for a model the tenant has left. Every returned row carries the models as the
   * statement's own snapshot has them (a kept configuration costs no read of its own); when
   * nothing matched they are read after it. Returning no row for an empty result instead of
   * restructuring the statement around one: that restructure measured ~0.7 ms more PostgreSQL CPU.
   */
  tenantModels?: readonly string[];
}

export interface RecallMatch {
  id: string;
  name: string;
  whenToUse: string;
  toolsRequired: string[];
  revision: number;
  body: string;
  truncated: boolean;
  /** The procedure's best cosine between the goal and what it is for (a learned-from goal or its when_to_use). */
  similarity: number;
  /** The reciprocal-rank fusion of its semantic and lexical ranks: the order of the result. */
  fused: number;
}

/** A recall statement's row: the procedure, its pinned revision's body cut in SQL, and its two scores. */
export interface RecallMatchRow {
  id: string;
  name: string;
  when_to_use: string;
  tools_required: string[];
  revision: number;
  body: string;
  truncated: boolean;
  similarity: number;
  fused: number;
}

/** A recall statement's row as the match it returns (both recall reads select the same columns). */
export function recallMatchOf(row: RecallMatchRow): RecallMatch {
  return {
    id: row.id,
    name: row.name,
    whenToUse: row.when_to_use,
    toolsRequired: row.tools_required,
    revision: row.revision,
    body: row.body,
    truncated: row.truncated,
    similarity: Number(row.similarity),
    fused: Number(row.fused),
  };
}

/** Nearest vectors read from the HNSW index per query: pgvector's default ef_search, so no extra index pass. */
const CANDIDATE_VECTORS = 40;
/** Rows read from the GIN index that match every lexeme of the goal: the full-text-only candidates. */
const CANDIDATE_FULL_TEXT_ROWS = 50;
/** Procedures in the full-text ranking. */
const CANDIDATE_LEXICAL = 20;
/** The uncovered runs nearest the goal that recall weighs against each procedure (the abstention rule). */
const CONTRAST_RUNS = 3;
/** Reciprocal-rank fusion's constant (Cormack et al., 2009): 1 / (k + rank) from each list. */
const RRF_K = 60;

/**
 * recall's one read: the HNSW scan over the tenant's recall vectors (best cosine per procedure)
 * and the full-text ranking of their text (ts_rank against any of the goal's lexemes, best per
 * procedure; ts_rank_cd measured 100× slower) fused by reciprocal rank; only live procedures (enabled, not superseded) whose best
 * cosine reaches the threshold and the procedure's own acceptance; the pinned revision's body joined for the top K only, cut in SQL.
 * The full-text ranking reads the vector candidates' rows and, from the GIN index, a bounded
 * number of rows matching every lexeme of the goal: ranking every row that shares one common word
 * with the goal would cost time in proportion to the tenant's size.
 */
export async function searchRecallVectors(
  db: Queryable,
  tenantId: string,
  query: RecallQuery,
  options: RecallSearchOptions,
): Promise<RecallMatch[]> {
  const d = checkedDimension(query.embedding.length);
  const { rows } = await db.query<RecallMatchRow & { tenant_models: string[] }>({
    // Named (planned once per connection: planning costs about as much as running it) except on
    // the embedded database, where every connection shares one backend session and a second
    // connection's PREPARE of the same name fails ("already exists").
    ...(isEmbeddedDatabase(db) ? {} : { name: `recall_search_${d}` }),
    text: `WITH q AS (
       SELECT $2::vector(${d}) AS v,
              -- plainto_tsquery ANDs every lexeme; a goal should match on any of them.
              replace(plainto_tsquery('english', $3)::text, ' & ', ' | ')::tsquery AS t,
              plainto_tsquery('english', $3) AS every_lexeme
     ), nearest AS (
       -- Ordered by the parameter itself, not q.v: only a constant ordering value reaches the HNSW index.
       SELECT gv.procedure_id, gv.source, 1 - (gv.embedding::vector(${d}) <=> $2::vector(${d})) AS similarity
         FROM procedure_goal_vectors gv
        WHERE gv.tenant_id = $1 AND gv.model_id = $4 AND gv.dimension = ${d}
        ORDER BY gv.embedding::vector(${d}) <=> $2::vector(${d})
        LIMIT ${CANDIDATE_VECTORS}
     ), best AS (
       SELECT procedure_id, max(similarity) AS similarity,
              max(similarity) FILTER (WHERE source LIKE 'run:%') AS goal_similarity
         FROM nearest GROUP BY procedure_id
     ), semantic AS (
       -- Ranked by the cosine with the centroid of the procedure's learned goals: a prototype of
       -- paraphrases ranks a new wording better than its nearest single goal does
       -- (bench/results/2026-12-04-paraphrased-runs.md); the best single cosine where there is no centroid.
       SELECT b.procedure_id, b.similarity, b.goal_similarity,
              row_number() OVER (ORDER BY coalesce(c.similarity, b.similarity) DESC, b.procedure_id) AS rank
         FROM best b
         LEFT JOIN LATERAL (SELECT 1 - (p.goal_centroid::vector(${d}) <=> $2::vector(${d})) AS similarity
                              FROM procedures p
                             WHERE p.tenant_id = $1 AND p.id = b.procedure_id AND p.goal_centroid_model = $4
                               AND vector_dims(p.goal_centroid) = ${d}) c ON true
     ), lexical_rows AS (
       SELECT gv.procedure_id, gv.search
         FROM procedure_goal_vectors gv JOIN semantic s USING (procedure_id)
        WHERE gv.tenant_id = $1 AND gv.model_id = $4 AND gv.dimension = ${d}
       UNION ALL
       (SELECT gv.procedure_id, gv.search
          FROM procedure_goal_vectors gv, q
         WHERE gv.search @@ q.every_lexeme AND gv.tenant_id = $1 AND gv.model_id = $4 AND gv.dimension = ${d}
         LIMIT ${CANDIDATE_FULL_TEXT_ROWS})
     ), lexical AS (
       SELECT lr.procedure_id, row_number() OVER (ORDER BY max(ts_rank(lr.search, q.t)) DESC, lr.procedure_id) AS rank
         FROM lexical_rows lr, q
        WHERE lr.search @@ q.t
        GROUP BY lr.procedure_id
        ORDER BY rank LIMIT ${CANDIDATE_LEXICAL}
     ), fused AS (
       SELECT c.procedure_id,
              -- A full-text hit the vector scan did not reach is measured exactly over its own vectors.
              coalesce(s.similarity, (SELECT max(1 - (gv.embedding::vector(${d}) <=> q.v))
                                        FROM procedure_goal_vectors gv, q
                                       WHERE gv.tenant_id = $1 AND gv.procedure_id = c.procedure_id
                                         AND gv.model_id = $4 AND gv.dimension = ${d})) AS similarity,
              -- The best over the learned goals alone when one of them is among the candidates (they are the nearest).
              s.goal_similarity,
              coalesce(1.0 / (${RRF_K} + s.rank), 0) + coalesce(1.0 / (${RRF_K} + l.rank), 0) AS fused
         FROM (SELECT procedure_id FROM semantic UNION SELECT procedure_id FROM lexical) c
         LEFT JOIN semantic s USING (procedure_id)
         LEFT JOIN lexical l USING (procedure_id)
     ), uncovered AS MATERIALIZED (
       -- The tenant's runs no procedure was learned from or observed in whose goals come nearest the
       -- goal, and the tools each called: a run nearer the goal than a procedure's own goals that did
       -- another job says the goal is that job's, which has no skill (src/recall/recall.ts).
       SELECT n.similarity,
              coalesce((SELECT array_agg(DISTINCT tc.tool) FROM tool_calls tc
                         WHERE tc.tenant_id = $1 AND tc.run_id = n.run_id AND tc.success), '{}') AS tools
         FROM (SELECT ge.run_id, 1 - (ge.embedding::vector(${d}) <=> $2::vector(${d})) AS similarity
                 FROM goal_embeddings ge
                WHERE $8::float8 IS NOT NULL AND ge.tenant_id = $1 AND ge.model_id = $4 AND ge.dimension = ${d}
                  AND NOT EXISTS (SELECT 1 FROM procedure_runs pr WHERE pr.tenant_id = $1 AND pr.run_id = ge.run_id)
                  AND NOT EXISTS (SELECT 1 FROM procedure_observations po WHERE po.tenant_id = $1 AND po.run_id = ge.run_id)
                ORDER BY similarity DESC
                LIMIT ${CONTRAST_RUNS}) n
     ), ranked AS MATERIALIZED (
       SELECT p.id, p.skill_id, p.name, p.when_to_use, p.tools_required, p.revision, f.similarity, f.fused
         FROM fused f
         JOIN procedures p ON p.id = f.procedure_id
        WHERE p.tenant_id = $1 AND p.enabled AND p.superseded_by IS NULL AND f.similarity >= $5
          -- The procedure's own acceptance (schema/013): as close to its learned goals as they come to each other.
          -- Capped (ACCEPTANCE_CAP): a procedure learned from near-copy goals must not ask a new goal to be a copy.
          -- The best over its learned goals is what the bar is on the scale of: from the candidates, else measured
          -- over its own goals — only here, for a live procedure past the threshold with a bar (OR and COALESCE are lazy).
          AND ($8::float8 IS NULL OR p.recall_loosest IS NULL
               OR coalesce(f.goal_similarity, (SELECT max(1 - (gv.embedding::vector(${d}) <=> $2::vector(${d})))
                                                 FROM procedure_goal_vectors gv
                                                WHERE gv.tenant_id = $1 AND gv.procedure_id = p.id
                                                  AND gv.model_id = $4 AND gv.dimension = ${d} AND gv.source LIKE 'run:%'))
                  >= least(p.recall_loosest - $8::float8, $9::float8))
          -- Abstain when a run of another job is nearer the goal than anything the procedure is for:
          -- one that called under half of the procedure's tools.
          AND NOT EXISTS (SELECT 1 FROM uncovered u
                           WHERE u.similarity > f.similarity
                             AND 2 * (SELECT count(*) FROM jsonb_array_elements_text(p.tools_required) AS t(tool) WHERE t.tool = ANY(u.tools))
                                 < jsonb_array_length(p.tools_required))
        ORDER BY f.fused DESC, f.similarity DESC, p.name
        LIMIT $6
     )
     SELECT k.id, k.name, k.when_to_use, k.tools_required, k.revision, k.similarity, k.fused,
            left(r.body, $7) AS body, char_length(r.body) > $7 AS truncated,
            -- The tenant's models as this snapshot has them, in tenantEmbeddingModels' order (an InitPlan: read once).
            (SELECT coalesce(array_agg(model_id ORDER BY ${TENANT_MODELS_ORDER}), '{}')
               FROM embedding_models WHERE tenant_id = $1) AS tenant_models
       FROM ranked k
       -- The exact revision the procedure records, archived or not.
       JOIN skill_revisions r ON r.tenant_id = $1 AND r.skill_id = k.skill_id AND r.revision = k.revision
      ORDER BY k.fused DESC, k.similarity DESC, k.name`,
    values: [
      tenantId,
      vectorParameter(query.embedding),
      query.text,
      query.modelId,
      options.threshold,
      options.limit,
      options.bodyChars,
      options.acceptanceSlack,
      ACCEPTANCE_CAP,
    ],
  });
  // Nothing matched, so no row carried the models: they are read (a recall that finds nothing pays the read it used to).
  if (options.tenantModels) await checkTenantModels(db, tenantId, options.tenantModels, rows[0]?.tenant_models);
  return rows.map(recallMatchOf);
}

/** How many recall vectors a procedure has for a model (tests and benches check the install). */
export async function countProcedureGoalVectors(db: Queryable, tenantId: string, procedureId: string, modelId: string): Promise<number> {
  const { rows } = await db.query<{ count: string }>(
    `SELECT count(*) FROM procedure_goal_vectors WHERE tenant_id = $1 AND procedure_id = $2 AND model_id = $3`,
    [tenantId, procedureId, modelId],
  );
  return Number(rows[0]!.count);
}
