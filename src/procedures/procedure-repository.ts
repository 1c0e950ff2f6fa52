import type pg from 'pg';
import pgvector from 'pgvector';
import { EmbeddingDimensionMismatch } from '../embedding/embedding-errors.ts';
import type { Queryable } from '../store/database.ts';
import { mapRow } from '../store/row-mapping.ts';
import type { ConsensusStep, CountedRun, Procedure, ProcedureState } from './procedure.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { storeWhenToUseVector } from './procedure-goal-vector-repository.ts';

/**
 * The `procedures` table: one row per learned skill, holding its track record (success and
 * attempt counts, provenance, enabled, superseded_by) and the embedding of its when_to_use (also
 * stored, with the goals it was learned from, as its recall vectors).
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

export async function findProcedureByName(db: Queryable, tenantId: string, name: string): Promise<Procedure | undefined> {
  const { rows } = await db.query<ProcedureRow>(`SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 AND name = $2`, [tenantId, name]);
  return rows[0] ? toProcedure(rows[0]) : undefined;
}

export async function findProcedureById(db: Queryable, tenantId: string, id: string): Promise<Procedure | undefined> {
  const { rows } = await db.query<ProcedureRow>(`SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return rows[0] ? toProcedure(rows[0]) : undefined;
}

export async function findProcedureStates(db: Queryable, tenantId: string, names: string[]): Promise<Map<string, ProcedureState>> {
  const { rows } = await db.query<{
    name: string;
    enabled: boolean;
    superseded_by: string | null;
    success_count: number;
    attempt_count: number;
  }>(
    `SELECT p.name, p.enabled, s.name AS superseded_by, p.success_count, p.attempt_count
       FROM procedures p LEFT JOIN procedures s ON s.tenant_id = p.tenant_id AND s.id = p.superseded_by
      WHERE p.tenant_id = $1 AND p.name = ANY($2::text[])`,
    [tenantId, names],
  );
  return new Map(
    rows.map((row) => [
      row.name,
      {
        state: row.superseded_by !== null ? 'superseded' : row.enabled ? 'live' : 'disabled',
        enabled: row.enabled,
        supersededBy: row.superseded_by,
        successCount: row.success_count,
        attemptCount: row.attempt_count,
      },
    ]),
  );
}

export async function listProcedures(db: Queryable, tenantId: string): Promise<Procedure[]> {
  const { rows } = await db.query<ProcedureRow>(`SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 ORDER BY name`, [tenantId]);
  return rows.map(toProcedure);
}

/** What a new revision changes on its procedure: content, not identity and not the track record. */
export type ProcedureContent = Pick<
  Procedure,
  'skillId' | 'name' | 'revision' | 'whenToUse' | 'toolSequence' | 'toolsRequired' | 'embeddingModel'
> & {
  embedding: Float32Array;
};

export type ProcedureWrite = ProcedureContent & Pick<Procedure, 'successCount' | 'attemptCount'> & { fromSessions: string[] };

function contentParameters(write: ProcedureContent): unknown[] {
  return [
    write.revision,
    write.whenToUse,
    JSON.stringify(write.toolSequence),
    JSON.stringify(write.toolsRequired),
    pgvector.toSql(Array.from(write.embedding)),
    write.embeddingModel,
    write.embedding.length,
  ];
}

export async function insertProcedure(db: pg.PoolClient, tenantId: string, write: ProcedureWrite): Promise<Procedure> {
  const { rows } = await db.query<ProcedureRow>(
    `INSERT INTO procedures (tenant_id, skill_id, name, revision, when_to_use, tool_sequence, tools_required,
       embedding, embedding_model, embedding_dimension, success_count, attempt_count, provenance)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     RETURNING ${COLUMNS}`,
    [
      tenantId,
      write.skillId,
      write.name,
      ...contentParameters(write),
      write.successCount,
      write.attemptCount,
      JSON.stringify({ source: 'synthesized', from_sessions: write.fromSessions }),
    ],
  );
  const procedure = toProcedure(rows[0]!);
  await storeWhenToUseVector(db, tenantId, procedure.id, {
    text: write.whenToUse,
    embedding: write.embedding,
    modelId: write.embeddingModel,
  });
  return procedure;
}

/** A new revision of the same skill: content fields change; identity and the track record (countProcedureRuns) do not. */
export async function updateProcedure(db: pg.PoolClient, tenantId: string, id: string, write: ProcedureContent): Promise<void> {
  await db.query(
    `UPDATE procedures SET revision = $3, when_to_use = $4, tool_sequence = $5, tools_required = $6,
       embedding = $7, embedding_model = $8, embedding_dimension = $9, updated_at = now()
     WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, ...contentParameters(write)],
  );
  await storeWhenToUseVector(db, tenantId, id, { text: write.whenToUse, embedding: write.embedding, modelId: write.embeddingModel });
}

/**
 * Adds runs to a procedure's track record, each at most once: a run already counted (by an earlier
 * pass, or observed by a review) adds nothing. Provenance gains the new successful runs, and the
 * goal centroid is recomputed over every successful run counted, for `goalModel`.
 */
export async function countProcedureRuns(
  db: pg.PoolClient,
  tenantId: string,
  procedureId: string,
  passId: string,
  runs: CountedRun[],
  goalModel: string,
): Promise<{ successes: number; attempts: number }> {
  const { rows } = await db.query<{ run_id: string; success: boolean }>(
    `WITH fresh AS (
       INSERT INTO procedure_runs (tenant_id, procedure_id, run_id, success, pass_id)
       SELECT $1, $2, r.run_id, r.success, $3 FROM jsonb_to_recordset($4::jsonb) AS r(run_id text, success boolean)
       ON CONFLICT DO NOTHING
       RETURNING run_id, success)
     SELECT run_id, success FROM fresh f
      WHERE NOT EXISTS (SELECT 1 FROM procedure_observations o
                         WHERE o.tenant_id = $1 AND o.procedure_id = $2 AND o.run_id = f.run_id)
      ORDER BY run_id`,
    [tenantId, procedureId, passId, JSON.stringify(runs.map((run) => ({ run_id: run.runId, success: run.success })))],
  );
  const successes = rows.filter((row) => row.success).map((row) => row.run_id);
  await db.query(
    `UPDATE procedures SET success_count = success_count + $3, attempt_count = attempt_count + $4,
        provenance = jsonb_set(provenance, '{from_sessions}', (provenance -> 'from_sessions') || $5::jsonb),
        goal_centroid = (SELECT avg(g.embedding)::vector
                           FROM procedure_runs pr JOIN goal_embeddings g
                             ON g.tenant_id = pr.tenant_id AND g.run_id = pr.run_id AND g.model_id = $6
                          WHERE pr.tenant_id = $1 AND pr.procedure_id = $2 AND pr.success),
        goal_centroid_model = $6, updated_at = now()
      WHERE tenant_id = $1 AND id = $2`,
    [tenantId, procedureId, successes.length, rows.length, JSON.stringify(successes), goalModel],
  );
  return { successes: successes.length, attempts: rows.length };
}

/** Which of `runIds` the procedure has already counted (learned from, or observed by a review). */
export async function findCountedRuns(db: Queryable, tenantId: string, procedureId: string, runIds: string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ run_id: string }>(
    `SELECT run_id FROM procedure_runs WHERE tenant_id = $1 AND procedure_id = $2 AND run_id = ANY($3::text[])
     UNION
     SELECT run_id FROM procedure_observations WHERE tenant_id = $1 AND procedure_id = $2 AND run_id = ANY($3::text[])`,
    [tenantId, procedureId, runIds],
  );
  return new Set(rows.map((row) => row.run_id));
}

/** For each of `runIds` that a live (not superseded) procedure counts as a success: those procedures' ids. */
export async function findLiveLearners(db: Queryable, tenantId: string, runIds: string[]): Promise<Map<string, string[]>> {
  const { rows } = await db.query<{ run_id: string; procedure_id: string }>(
    `SELECT pr.run_id, pr.procedure_id FROM procedure_runs pr
       JOIN procedures p ON p.tenant_id = pr.tenant_id AND p.id = pr.procedure_id
      WHERE pr.tenant_id = $1 AND pr.run_id = ANY($2::text[]) AND pr.success AND p.superseded_by IS NULL
      ORDER BY pr.run_id, pr.procedure_id`,
    [tenantId, runIds],
  );
  const learners = new Map<string, string[]>();
  for (const row of rows) learners.set(row.run_id, [...(learners.get(row.run_id) ?? []), row.procedure_id]);
  return learners;
}

/** The runs a procedure's record counts, oldest first (its learned evidence). */
export async function listCountedRuns(db: Queryable, tenantId: string, procedureId: string): Promise<CountedRun[]> {
  const { rows } = await db.query<{ run_id: string; success: boolean }>(
    `SELECT run_id, success FROM procedure_runs WHERE tenant_id = $1 AND procedure_id = $2 ORDER BY counted_at, run_id`,
    [tenantId, procedureId],
  );
  return rows.map((row) => ({ runId: row.run_id, success: row.success }));
}

/**
 * Every procedure of the tenant with the mean goal embedding of the runs it was learned from, for
 * `goalModel`: the stored centroid, or (procedures learned before it was stored, or under another
 * model) one computed from their counted runs.
 */
export async function listProceduresWithGoalCentroids(
  db: Queryable,
  tenantId: string,
  goalModel: string,
): Promise<Array<{ procedure: Procedure; goalCentroid: Float32Array | null }>> {
  const { rows } = await db.query<ProcedureRow & { centroid: string | null }>(
    `SELECT ${COLUMNS},
        CASE WHEN goal_centroid_model = $2 THEN goal_centroid::text
             ELSE (SELECT avg(g.embedding)::text
                     FROM procedure_runs pr JOIN goal_embeddings g
                       ON g.tenant_id = pr.tenant_id AND g.run_id = pr.run_id AND g.model_id = $2
                    WHERE pr.tenant_id = procedures.tenant_id AND pr.procedure_id = procedures.id AND pr.success) END AS centroid
       FROM procedures WHERE tenant_id = $1 ORDER BY name`,
    [tenantId, goalModel],
  );
  return rows.map((row) => ({
    procedure: toProcedure(row),
    goalCentroid: row.centroid === null ? null : Float32Array.from(pgvector.fromSql(row.centroid) as number[]),
  }));
}

/**
 * For each procedure of the tenant, the tools the successful runs it counted called a varying
 * number of times (their successful calls): some not at all, or some more often than others —
 * what its own record shows to be optional (observedOptionalTools asks the same of a cluster's runs).
 */
export async function findRecordedOptionalTools(db: Queryable, tenantId: string): Promise<Map<string, string[]>> {
  const { rows } = await db.query<{ procedure_id: string; tool: string }>(
    `WITH learned AS (
       SELECT procedure_id, run_id FROM procedure_runs WHERE tenant_id = $1 AND success),
     totals AS (SELECT procedure_id, count(*) AS runs FROM learned GROUP BY procedure_id),
     calls AS (
       SELECT l.procedure_id, l.run_id, t.tool, count(*) AS calls
         FROM learned l JOIN tool_calls t ON t.tenant_id = $1 AND t.run_id = l.run_id AND t.success
        GROUP BY l.procedure_id, l.run_id, t.tool),
     uses AS (
       SELECT procedure_id, tool, count(*) AS runs, min(calls) AS fewest, max(calls) AS most
         FROM calls GROUP BY procedure_id, tool)
     SELECT u.procedure_id, u.tool FROM uses u JOIN totals USING (procedure_id)
      WHERE u.runs < totals.runs OR u.fewest <> u.most ORDER BY u.procedure_id, u.tool`,
    [tenantId],
  );
  const optional = new Map<string, string[]>();
  for (const row of rows) optional.set(row.procedure_id, [...(optional.get(row.procedure_id) ?? []), row.tool]);
  return optional;
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
  // Rows locked in id order, as lockProcedures (the track record) takes them: a plain UPDATE locks
  // them in the order its scan meets them, and the two deadlocked under load (the fault suite).
  await db.query(
    `UPDATE procedures p SET last_used_at = now()
       FROM (SELECT id FROM procedures WHERE tenant_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE) locked
      WHERE p.tenant_id = $1 AND p.id = locked.id`,
    [tenantId, ids],
  );
}

export async function findProceduresByName(db: Queryable, tenantId: string, names: string[]): Promise<Procedure[]> {
  if (names.length === 0) return [];
  const { rows } = await db.query<ProcedureRow>(`SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 AND name = ANY($2::text[])`, [
    tenantId,
    names,
  ]);
  return rows.map(toProcedure);
}

/** One run's outcome for one procedure, as a review batch observes it. */
export interface Observation {
  runId: string;
  procedureId: string;
  success: boolean;
  via: 'pinned' | 'recalled';
}

/**
 * Records a batch's observations in one statement, idempotent per (run, procedure): returns those
 * this call recorded (a run already counted is left out, so a retried batch counts no run twice),
 * each saying whether the run is one the procedure was learned from (already in its record).
 */
export async function insertObservations(
  db: pg.PoolClient,
  tenantId: string,
  observations: readonly Observation[],
): Promise<Array<{ runId: string; procedureId: string; learned: boolean }>> {
  if (observations.length === 0) return [];
  const { rows } = await db.query<{ run_id: string; procedure_id: string; learned: boolean }>(
    `WITH inserted AS (
       INSERT INTO procedure_observations (tenant_id, run_id, procedure_id, success, via)
       SELECT $1, o.run_id, o.procedure_id, o.success, o.via
         FROM unnest($2::text[], $3::uuid[], $4::boolean[], $5::text[]) AS o(run_id, procedure_id, success, via)
       ON CONFLICT DO NOTHING
       RETURNING run_id, procedure_id
     )
     SELECT i.run_id, i.procedure_id,
            EXISTS (SELECT 1 FROM procedure_runs pr WHERE pr.tenant_id = $1 AND pr.procedure_id = i.procedure_id AND pr.run_id = i.run_id) AS learned
       FROM inserted i`,
    [
      tenantId,
      observations.map((observation) => observation.runId),
      observations.map((observation) => observation.procedureId),
      observations.map((observation) => observation.success),
      observations.map((observation) => observation.via),
    ],
  );
  return rows.map((row) => ({ runId: row.run_id, procedureId: row.procedure_id, learned: row.learned }));
}

/** What a batch's observations add to a procedure's counts. */
export interface ObservedCounts {
  procedureId: string;
  /** attempt_count and success_count: runs the procedure was not learned from. */
  attempts: number;
  successes: number;
  /** The observed window: every observed run. */
  observedAttempts: number;
  observedSuccesses: number;
}

/** Adds a batch's observations to the procedures' counts in one statement, and marks them used (last_used_at). */
export async function addObservedCounts(db: pg.PoolClient, tenantId: string, counts: readonly ObservedCounts[]): Promise<void> {
  if (counts.length === 0) return;
  await db.query(
    `UPDATE procedures p SET attempt_count = p.attempt_count + c.attempts, success_count = p.success_count + c.successes,
        observed_attempts = p.observed_attempts + c.observed_attempts, observed_successes = p.observed_successes + c.observed_successes,
        last_used_at = now()
       FROM unnest($2::uuid[], $3::int[], $4::int[], $5::int[], $6::int[]) AS c(id, attempts, successes, observed_attempts, observed_successes)
      WHERE p.tenant_id = $1 AND p.id = c.id`,
    [
      tenantId,
      counts.map((count) => count.procedureId),
      counts.map((count) => count.attempts),
      counts.map((count) => count.successes),
      counts.map((count) => count.observedAttempts),
      counts.map((count) => count.observedSuccesses),
    ],
  );
}

/**
 * Locks procedures for the rest of the transaction, in id order, and returns them as locked:
 * transactions that observe several procedures (review batches) lock them in one order, so they
 * wait for each other instead of deadlocking.
 */
export async function lockProcedures(db: pg.PoolClient, tenantId: string, ids: readonly string[]): Promise<Procedure[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<ProcedureRow>(
    `SELECT ${COLUMNS} FROM procedures WHERE tenant_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE`,
    [tenantId, ids],
  );
  return rows.map(toProcedure);
}

export async function hasProcedures(db: Queryable, tenantId: string): Promise<boolean> {
  const { rowCount } = await db.query(`SELECT 1 FROM procedures WHERE tenant_id = $1 LIMIT 1`, [tenantId]);
  return (rowCount ?? 0) > 0;
}

/** Re-embeds one procedure's when_to_use with another model (`skillsmith reembed`), its recall vector too. */
export async function replaceProcedureEmbedding(
  db: Queryable,
  tenantId: string,
  procedure: Procedure,
  embedding: Float32Array,
  embeddingModel: string,
): Promise<void> {
  await db.query(
    `UPDATE procedures SET embedding = $3, embedding_model = $4, embedding_dimension = $5, updated_at = now()
      WHERE tenant_id = $1 AND id = $2`,
    [tenantId, procedure.id, pgvector.toSql(Array.from(embedding)), embeddingModel, embedding.length],
  );
  await storeWhenToUseVector(db, tenantId, procedure.id, { text: procedure.whenToUse, embedding, modelId: embeddingModel });
}
