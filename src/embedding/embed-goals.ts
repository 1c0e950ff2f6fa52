import type { Queryable } from '../store/database.ts';
import type { Embedder } from './embedder.ts';
import {
  countGoalsWithoutEmbedding,
  ensureEmbeddingModel,
  findGoalsWithoutEmbedding,
  insertGoalEmbeddings,
} from './goal-embedding-repository.ts';

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
}

/**
 * EMBED: every goal of the tenant without an embedding for the embedder's model, in pages,
 * each page one transaction-free insert (rows are independent and the insert is idempotent).
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
    // Progress after every embedder batch, not only every page: a page of long goals on a busy
    // machine can outlast the activity's heartbeat timeout (NESTFUL: 256 goals > 30 s at load 20).
    const vectors = await embedder.embed(
      goals.map((goal) => goal.goal),
      'goal',
      { onProgress: (done) => report(processed + done) },
    );
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
  return { tenantId, modelId: model.modelId, dimension: model.dimension, missing, embedded };
}
