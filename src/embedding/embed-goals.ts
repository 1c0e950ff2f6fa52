import type { Queryable } from '../store/database.ts';
import type { Embedder } from './embedder.ts';
import { EmbeddingDimensionMismatch } from './embedding-errors.ts';
import {
  countGoalsWithoutEmbedding,
  ensureEmbeddingModel,
  findGoalsWithoutEmbedding,
  findGoalTextEmbeddings,
  insertGoalEmbeddings,
  insertGoalTextEmbeddings,
  type EmbeddingModelRecord,
} from './goal-embedding-repository.ts';
import { goalTextHash, normaliseGoalText } from './goal-text.ts';

export interface EmbedGoalsOptions {
  /** Only these runs; undefined = every run of the tenant. */
  runIds?: string[] | undefined;
  /** Goals read, embedded and written per round trip. */
  pageSize: number;
  onProgress?: (progress: EmbedGoalsProgress) => void;
  /** Checked between pages; an aborted signal stops the work with what is written kept. */
  signal?: AbortSignal;
}

export interface EmbedGoalsProgress {
  embedded: number;
  total: number;
}

export interface EmbedGoalsResult {
  tenantId: string;
  modelId: string;
  dimension: number;
  /** Goals that had no embedding when the step started. */
  missing: number;
  /** Embeddings written by this call (fewer than `missing` when another worker raced us). */
  embedded: number;
  /** Distinct goal texts that reached the model; the other goals reused a cached vector. */
  textsEmbedded: number;
}

/**
 * One vector per goal text, in order: each distinct normalised text is looked up in the tenant's
 * per-text cache and only the texts never embedded with this model reach the model (and are
 * cached). Progress counts goals, after every embedder batch: a page of long goals on a busy
 * machine can outlast the activity's heartbeat timeout (NESTFUL: 256 goals > 30 s at load 20).
 */
async function goalVectors(
  db: Queryable,
  embedder: Embedder,
  tenantId: string,
  model: EmbeddingModelRecord,
  goals: readonly string[],
  onProgress: (goalsDone: number) => void,
): Promise<{ vectors: Float32Array[]; textsEmbedded: number }> {
  const texts = goals.map(normaliseGoalText);
  const hashes = texts.map(goalTextHash);
  const vectors = await findGoalTextEmbeddings(db, tenantId, model.modelId, [...new Set(hashes)]);
  const missing = new Map<string, string>();
  hashes.forEach((hash, index) => {
    if (!vectors.has(hash)) missing.set(hash, texts[index]!);
  });
  if (missing.size > 0) {
    const fresh = await embedder.embed([...missing.values()], 'goal', {
      onProgress: (done) => onProgress(Math.floor((done * goals.length) / missing.size)),
    });
    const rows = [...missing.keys()].map((textHash, index) => ({ textHash, embedding: fresh[index]! }));
    await insertGoalTextEmbeddings(db, tenantId, model, rows);
    for (const { textHash, embedding } of rows) vectors.set(textHash, embedding);
  }
  return { vectors: hashes.map((hash) => vectors.get(hash)!), textsEmbedded: missing.size };
}

/**
 * The embedder with its goals going through the tenant's per-text cache (goalVectors): a goal a
 * pass or an earlier review embedded costs a lookup, and one embedded here is one the next pass
 * does not embed. Other kinds, and a tenant whose recorded dimension differs from the model's
 * (no cache can hold its vectors), go straight to the model.
 */
export function withGoalTextCache(db: Queryable, embedder: Embedder, tenantId: string): Embedder {
  const model = { modelId: embedder.modelId, dimension: embedder.dimension };
  return {
    modelId: embedder.modelId,
    dimension: embedder.dimension,
    async embed(texts, kind, options) {
      if (kind !== 'goal' || texts.length === 0) return embedder.embed(texts, kind, options);
      try {
        await ensureEmbeddingModel(db, tenantId, model);
      } catch (error) {
        if (error instanceof EmbeddingDimensionMismatch) return embedder.embed(texts, kind, options);
        throw error;
      }
      const { vectors } = await goalVectors(db, embedder, tenantId, model, texts, (done) => options?.onProgress?.(done, texts.length));
      return vectors;
    },
  };
}

/**
 * EMBED: every goal of the tenant without an embedding for the embedder's model, in pages,
 * each page one transaction-free insert (rows are independent and the insert is idempotent).
 * Each distinct goal text is embedded once per model (goalVectors), so repeated goals cost a lookup.
 * Refuses a model whose dimension differs from the tenant's stored one before embedding anything.
 */
export async function embedMissingGoals(
  db: Queryable,
  embedder: Embedder,
  tenantId: string,
  options: EmbedGoalsOptions,
): Promise<EmbedGoalsResult> {
  const model = { modelId: embedder.modelId, dimension: embedder.dimension };
  await ensureEmbeddingModel(db, tenantId, model);
  const missing = await countGoalsWithoutEmbedding(db, tenantId, model.modelId, { runIds: options.runIds });
  let embedded = 0;
  let textsEmbedded = 0;
  let processed = 0;
  let afterRunId: string | null = null;
  let reported = -1;
  const report = (done: number) => {
    if (done === reported) return;
    reported = done;
    options.onProgress?.({ embedded: done, total: Math.max(missing, done) });
  };
  report(0);
  for (;;) {
    options.signal?.throwIfAborted();
    const goals = await findGoalsWithoutEmbedding(db, tenantId, model.modelId, {
      runIds: options.runIds,
      afterRunId,
      limit: options.pageSize,
    });
    if (goals.length === 0) break;
    const { vectors, textsEmbedded: fresh } = await goalVectors(
      db,
      embedder,
      tenantId,
      model,
      goals.map((goal) => goal.goal),
      (done) => report(processed + done),
    );
    textsEmbedded += fresh;
    embedded += await insertGoalEmbeddings(
      db,
      tenantId,
      model,
      goals.map((goal, index) => ({ runId: goal.runId, embedding: vectors[index]! })),
    );
    processed += goals.length;
    afterRunId = goals[goals.length - 1]!.runId;
    report(processed);
    if (goals.length < options.pageSize) break;
  }
  return { tenantId, modelId: model.modelId, dimension: model.dimension, missing, embedded, textsEmbedded };
}
