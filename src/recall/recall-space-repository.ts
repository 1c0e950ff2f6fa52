import type pg from 'pg';
import pgvector from 'pgvector';
import { toolRarity } from '../clustering/tool-rarity.ts';
import { turnTaker } from '../clustering/event-loop-turns.ts';
import { checkTenantModels, TENANT_MODELS_ORDER } from '../embedding/goal-embedding-repository.ts';
import { checkedDimension, recallMatchOf, type RecallMatch, type RecallMatchRow } from '../procedures/procedure-goal-vector-repository.ts';
import { isEmbeddedDatabase, withTransaction, type Queryable } from '../store/database.ts';
import { vectorParameter } from '../store/vector-parameter.ts';
import {
  decodeWhitening,
  encodeWhitening,
  learnWhitening,
  recallClassOf,
  SCATTER_GOALS_PER_PROCEDURE,
  whiten,
  type RecallClass,
  type RecallSpaceMatrix,
} from './recall-space.ts';

/**
 * The `recall_spaces` and `recall_space_classes` tables (schema/014): the tenant's recall space
 * per embedding model and the classes in it (src/recall/recall-space.ts). The only module with SQL
 * for them.
 */

/** A run covers a procedure when it called this share of the procedure's tools, each weighed by its specificity. */
export const COVERED_SHARE = 0.5;

export interface RecallSpaceSettings {
  /** A run that did another job completed with at least this many successful calls (SKILLSMITH_MIN_STEPS). */
  minSteps: number;
  /** The clustering's minimum occurrences: the family size tool specificity is measured for. */
  minOccurrences: number;
}

export interface RecallSpaceBuilt {
  version: number;
  procedures: number;
  /** Runs of other jobs: the tenant's successful runs no procedure counted or covers. */
  otherJobRuns: number;
}

interface ProcedureGoals {
  procedureId: string;
  tools: string[];
  goals: Float32Array[];
}

async function loadProcedureGoals(db: Queryable, tenantId: string, modelId: string): Promise<ProcedureGoals[]> {
  const { rows } = await db.query<{ id: string; tools_required: string[]; embedding: string }>(
    `SELECT p.id, p.tools_required, v.embedding::text AS embedding
       FROM procedures p
       JOIN LATERAL (SELECT gv.embedding FROM procedure_goal_vectors gv
                      WHERE gv.tenant_id = p.tenant_id AND gv.procedure_id = p.id AND gv.model_id = $2 AND gv.source LIKE 'run:%'
                      ORDER BY gv.source LIMIT ${SCATTER_GOALS_PER_PROCEDURE}) v ON true
      WHERE p.tenant_id = $1 AND p.superseded_by IS NULL
      ORDER BY p.id`,
    [tenantId, modelId],
  );
  const byProcedure = new Map<string, ProcedureGoals>();
  for (const row of rows) {
    let entry = byProcedure.get(row.id);
    if (!entry) byProcedure.set(row.id, (entry = { procedureId: row.id, tools: row.tools_required, goals: [] }));
    entry.goals.push(Float32Array.from(pgvector.fromSql(row.embedding) as number[]));
  }
  return [...byProcedure.values()];
}

/** Every run's successful tools (the specificity of each tool is measured over all of them). */
async function loadRunTools(db: Queryable, tenantId: string): Promise<Map<string, string[]>> {
  const { rows } = await db.query<{ run_id: string; tools: string[] }>(
    `SELECT run_id, array_agg(tool ORDER BY seq) AS tools FROM tool_calls WHERE tenant_id = $1 AND success GROUP BY run_id`,
    [tenantId],
  );
  return new Map(rows.map((row) => [row.run_id, row.tools]));
}

/** Completed runs with ≥ minSteps successful calls that no procedure counted or observed, with their goal vectors. */
async function loadUncountedRuns(
  db: Queryable,
  tenantId: string,
  modelId: string,
  minSteps: number,
): Promise<Array<{ runId: string; goal: Float32Array }>> {
  const { rows } = await db.query<{ run_id: string; embedding: string }>(
    `SELECT r.run_id, g.embedding::text AS embedding
       FROM runs r
       JOIN goal_embeddings g ON g.tenant_id = r.tenant_id AND g.run_id = r.run_id AND g.model_id = $2
      WHERE r.tenant_id = $1 AND r.status = 'completed'
        AND (SELECT count(*) FROM tool_calls tc WHERE tc.tenant_id = r.tenant_id AND tc.run_id = r.run_id AND tc.success) >= $3
        AND NOT EXISTS (SELECT 1 FROM procedure_runs pr WHERE pr.tenant_id = r.tenant_id AND pr.run_id = r.run_id)
        AND NOT EXISTS (SELECT 1 FROM procedure_observations po WHERE po.tenant_id = r.tenant_id AND po.run_id = r.run_id)
      ORDER BY r.run_id`,
    [tenantId, modelId, minSteps],
  );
  return rows.map((row) => ({ runId: row.run_id, goal: Float32Array.from(pgvector.fromSql(row.embedding) as number[]) }));
}

/**
 * Rebuilds the tenant's recall space for `modelId` as a whole, in one transaction: the whitening
 * from its procedures' learned goals (at most SCATTER_GOALS_PER_PROCEDURE each, for the centroid too), a class per procedure, and a class per run of another
 * job — a successful run no procedure counted or observed that calls under COVERED_SHARE of every
 * procedure's tools, each tool weighed by its specificity in the tenant (tool-rarity.ts: sharing
 * a step every job takes, or an off-plan call, is no evidence of doing a procedure's job).
 * Nothing is stored when the tenant has no procedure.
 */
export async function buildRecallSpace(
  pool: pg.Pool,
  tenantId: string,
  modelId: string,
  settings: RecallSpaceSettings,
  passId: string | null,
): Promise<RecallSpaceBuilt | null> {
  const procedures = await loadProcedureGoals(pool, tenantId, modelId);
  if (procedures.length === 0) return null;
  const dimension = procedures[0]!.goals[0]!.length;
  const space = learnWhitening(
    procedures.map((procedure) => procedure.goals),
    dimension,
  );
  const runTools = await loadRunTools(pool, tenantId);
  const specificity = toolRarity([...runTools.values()], settings.minOccurrences);
  const covers = (called: ReadonlySet<string>, tools: readonly string[]) => {
    let taken = 0;
    let total = 0;
    for (const tool of new Set(tools)) {
      total += specificity(tool);
      if (called.has(tool)) taken += specificity(tool);
    }
    return total > 0 && taken >= COVERED_SHARE * total;
  };
  const proceduresByTool = new Map<string, ProcedureGoals[]>();
  for (const procedure of procedures)
    for (const tool of new Set(procedure.tools)) proceduresByTool.set(tool, [...(proceduresByTool.get(tool) ?? []), procedure]);
  const otherJobs = (await loadUncountedRuns(pool, tenantId, modelId, settings.minSteps)).filter(({ runId }) => {
    const called = new Set(runTools.get(runId) ?? []);
    const candidates = new Set([...called].flatMap((tool) => proceduresByTool.get(tool) ?? []));
    return ![...candidates].some((procedure) => covers(called, procedure.tools));
  });
  // Whitening is synchronous work: the event loop gets its turns (heartbeats, the worker's other tasks).
  const takeTurn = turnTaker();
  const classes: Array<{ key: string; procedureId: string | null; klass: RecallClass }> = [];
  for (const procedure of procedures) {
    await takeTurn();
    classes.push({
      key: `procedure:${procedure.procedureId}`,
      procedureId: procedure.procedureId,
      klass: recallClassOf(procedure.goals.map((goal) => whiten(space, goal))),
    });
  }
  for (const { runId, goal } of otherJobs) {
    await takeTurn();
    classes.push({ key: `run:${runId}`, procedureId: null, klass: recallClassOf([whiten(space, goal)]) });
  }
  const version = await storeRecallSpace(pool, tenantId, modelId, space, classes, passId);
  return { version, procedures: procedures.length, otherJobRuns: otherJobs.length };
}

const INSERT_BATCH = 500;

async function storeRecallSpace(
  pool: pg.Pool,
  tenantId: string,
  modelId: string,
  space: RecallSpaceMatrix,
  classes: ReadonlyArray<{ key: string; procedureId: string | null; klass: RecallClass }>,
  passId: string | null,
): Promise<number> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ version: string }>(
      `INSERT INTO recall_spaces (tenant_id, model_id, dimension, version, whitening, pass_id)
       VALUES ($1, $2, $3, 1, $4, $5)
       ON CONFLICT (tenant_id, model_id) DO UPDATE
         SET dimension = EXCLUDED.dimension, version = recall_spaces.version + 1, whitening = EXCLUDED.whitening,
             pass_id = EXCLUDED.pass_id, built_at = now()
       RETURNING version`,
      [tenantId, modelId, space.dimension, encodeWhitening(space), passId],
    );
    const version = Number(rows[0]!.version);
    await client.query(`DELETE FROM recall_space_classes WHERE tenant_id = $1 AND model_id = $2`, [tenantId, modelId]);
    for (let start = 0; start < classes.length; start += INSERT_BATCH) {
      const batch = classes.slice(start, start + INSERT_BATCH);
      await client.query(
        `INSERT INTO recall_space_classes (tenant_id, model_id, version, class_key, procedure_id, members, dimension, centroid, norm_squared)
         SELECT $1, $2, $3, c.key, c.procedure_id, c.members, $4, c.centroid::vector, c.norm_squared
           FROM unnest($5::text[], $6::uuid[], $7::int[], $8::text[], $9::float8[]) AS c (key, procedure_id, members, centroid, norm_squared)`,
        [
          tenantId,
          modelId,
          version,
          space.dimension,
          batch.map((entry) => entry.key),
          batch.map((entry) => entry.procedureId),
          batch.map((entry) => entry.klass.members),
          batch.map((entry) => pgvector.toSql(Array.from(entry.klass.centroid)) as string),
          batch.map((entry) => entry.klass.normSquared),
        ],
      );
    }
    return version;
  });
}

export interface StoredRecallSpace extends RecallSpaceMatrix {
  version: number;
}

/** The tenant's recall space for a model, or null when no pass has built one. */
export async function loadRecallSpace(db: Queryable, tenantId: string, modelId: string): Promise<StoredRecallSpace | null> {
  const { rows } = await db.query<{ dimension: number; version: string; whitening: Buffer }>(
    `SELECT dimension, version, whitening FROM recall_spaces WHERE tenant_id = $1 AND model_id = $2`,
    [tenantId, modelId],
  );
  const row = rows[0];
  return row ? { ...decodeWhitening(row.dimension, row.whitening), version: Number(row.version) } : null;
}

/** The current version of the tenant's recall space for a model (null: none). */
export async function recallSpaceVersion(db: Queryable, tenantId: string, modelId: string): Promise<number | null> {
  const { rows } = await db.query<{ version: string }>(`SELECT version FROM recall_spaces WHERE tenant_id = $1 AND model_id = $2`, [
    tenantId,
    modelId,
  ]);
  return rows[0] ? Number(rows[0].version) : null;
}

export interface RecallSpaceQuery {
  /** The goal embedded for the goal task with `modelId`: the recall threshold is on its cosines. */
  embedding: Float32Array;
  /** The same goal in the recall space (`whiten`). */
  whitened: Float32Array;
  modelId: string;
  /** The version of the space `whitened` was computed in. */
  version: number;
}

export interface RecallSpaceSearchOptions {
  /** The best cosine (goal against a procedure's learned goals and when_to_use) the first procedure needs; below 0 off, with the abstention. */
  threshold: number;
  limit: number;
  bodyChars: number;
  /** κ of classScore (src/recall/recall-space.ts). */
  correction: number;
  tenantModels?: readonly string[];
}

/** Live procedures considered past the abstention before the threshold is read (more than any top K asks). */
const SPACE_CANDIDATES = 20;
/** Nearest vectors read from the HNSW index for the threshold: pgvector's default ef_search. */
const RELATED_VECTORS = 40;

/**
 * recall's read in the recall space: every class of the tenant's space scored against the goal
 * (classScore), the live procedures that beat every class of a job without a live skill (a run of
 * another job, a disabled or superseded procedure) ordered by score, returned when the goal is
 * like some live procedure's goals at all — its best plain cosine over their learned goals and
 * when_to_use reaches the threshold (what the threshold is calibrated on: goals of no job the
 * tenant has, recall-calibration.ts) — the space deciding which; an alternate after the first only
 * when its own best cosine reaches the threshold too. The pinned revision's body is cut in SQL. `stale` when the space is no
 * longer `query.version` (another pass rebuilt it): the caller reloads it and asks again.
 */
export async function searchRecallSpace(
  db: Queryable,
  tenantId: string,
  query: RecallSpaceQuery,
  options: RecallSpaceSearchOptions,
): Promise<{ stale: true } | { stale: false; matches: RecallMatch[] }> {
  const d = checkedDimension(query.whitened.length);
  if (query.embedding.length !== d) throw new Error(`invalid recall space query: a ${query.embedding.length}-d goal in a ${d}-d space`);
  const { rows } = await db.query<RecallMatchRow & { tenant_models: string[] }>({
    ...(isEmbeddedDatabase(db) ? {} : { name: `recall_space_search_${d}` }),
    text: `WITH scored AS (
       -- −‖q − μ‖² / (1 + κ/n) = −(1 + ‖μ‖² − 2 q·μ) / (1 + κ/n); <#> is the negative inner product.
       SELECT c.procedure_id,
              -(1 + c.norm_squared + 2 * (c.centroid::vector(${d}) <#> $3::vector(${d}))) / (1 + $5::float8 / c.members) AS score
         FROM recall_space_classes c
        WHERE c.tenant_id = $1 AND c.model_id = $2 AND c.version = $4 AND c.dimension = ${d}
     ), judged AS (
       SELECT s.procedure_id, s.score, coalesce(p.enabled AND p.superseded_by IS NULL, false) AS live
         FROM scored s LEFT JOIN procedures p ON p.tenant_id = $1 AND p.id = s.procedure_id
     ), bar AS (
       -- The best class of a job recall must not answer for.
       SELECT max(score) AS score FROM judged WHERE NOT live
     ), candidates AS (
       SELECT j.procedure_id, j.score FROM judged j, bar
        WHERE j.live AND ($6::float8 < 0 OR bar.score IS NULL OR j.score > bar.score)
        ORDER BY j.score DESC, j.procedure_id LIMIT ${SPACE_CANDIDATES}
     ), gated AS (
       SELECT c.procedure_id, c.score,
              (SELECT max(1 - (gv.embedding::vector(${d}) <=> $7::vector(${d}))) FROM procedure_goal_vectors gv
                WHERE gv.tenant_id = $1 AND gv.procedure_id = c.procedure_id AND gv.model_id = $2 AND gv.dimension = ${d}) AS similarity
         FROM candidates c
     ), related AS (
       -- Whether the goal is like any job of the tenant's live procedures at all: the threshold on the
       -- best plain cosine over their vectors (the nearest ones, from the HNSW index).
       SELECT max(n.similarity) AS similarity
         FROM (SELECT gv.procedure_id, 1 - (gv.embedding::vector(${d}) <=> $7::vector(${d})) AS similarity
                 FROM procedure_goal_vectors gv
                WHERE gv.tenant_id = $1 AND gv.model_id = $2 AND gv.dimension = ${d}
                ORDER BY gv.embedding::vector(${d}) <=> $7::vector(${d})
                LIMIT ${RELATED_VECTORS}) n
         JOIN procedures p ON p.tenant_id = $1 AND p.id = n.procedure_id AND p.enabled AND p.superseded_by IS NULL
     ), ranked AS MATERIALIZED (
       SELECT p.id, p.skill_id, p.name, p.when_to_use, p.tools_required, p.revision, g.similarity, g.score,
              row_number() OVER (ORDER BY g.score DESC, p.name) AS place
         FROM gated g JOIN procedures p ON p.tenant_id = $1 AND p.id = g.procedure_id, related
        WHERE $6::float8 < 0 OR related.similarity >= $6
     ), kept AS MATERIALIZED (
       -- The first is the answer; an alternate must itself reach the threshold.
       SELECT * FROM ranked WHERE $6::float8 < 0 OR place = 1 OR similarity >= $6
        ORDER BY place LIMIT $8
     )
     SELECT k.id, k.name, k.when_to_use, k.tools_required, k.revision, k.similarity, k.score AS fused,
            left(r.body, $9) AS body, char_length(r.body) > $9 AS truncated,
            (SELECT coalesce(array_agg(model_id ORDER BY ${TENANT_MODELS_ORDER}), '{}')
               FROM embedding_models WHERE tenant_id = $1) AS tenant_models
       FROM kept k
       JOIN skill_revisions r ON r.tenant_id = $1 AND r.skill_id = k.skill_id AND r.revision = k.revision
      ORDER BY k.score DESC, k.name`,
    values: [
      tenantId,
      query.modelId,
      vectorParameter(query.whitened),
      query.version,
      options.correction,
      options.threshold,
      vectorParameter(query.embedding),
      options.limit,
      options.bodyChars,
    ],
  });
  // A row comes only from classes of the asked version (one transaction rebuilds classes and version);
  // no row may mean the space was rebuilt since: ask.
  if (rows.length === 0 && (await recallSpaceVersion(db, tenantId, query.modelId)) !== query.version) return { stale: true };
  if (options.tenantModels) await checkTenantModels(db, tenantId, options.tenantModels, rows[0]?.tenant_models);
  return { stale: false, matches: rows.map(recallMatchOf) };
}
