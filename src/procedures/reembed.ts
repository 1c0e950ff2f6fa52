// Lives with procedures, not in embedding/: the procedure store depends on the embedding module
// (its model check), so the one operation that rewrites both sits above both.
import type pg from 'pg';
import { ensureRecallIndex, forgetOtherRecallModels, storeLearnedGoalVectors } from './procedure-goal-vector-repository.ts';
import { listProcedures, replaceProcedureEmbedding } from './procedure-repository.ts';
import { withTransaction } from '../store/database.ts';
import { embedMissingGoals, type EmbedGoalsProgress } from '../embedding/embed-goals.ts';
import type { Embedder } from '../embedding/embedder.ts';
import { forgetOtherModels } from '../embedding/goal-embedding-repository.ts';

export interface ReembedResult {
  tenantId: string;
  modelId: string;
  dimension: number;
  droppedGoalEmbeddings: number;
  embeddedGoals: number;
  reembeddedProcedures: number;
}

/**
 * `skillsmith reembed`: moves a tenant to the configured embedding model — the explicit way past
 * EmbeddingDimensionMismatch. Drops the goal embeddings of other models, embeds every goal with
 * this one, and re-embeds every procedure's when_to_use and rebuilds its recall vectors (so recall
 * and reconcile compare like with like). Procedures are rewritten in one transaction: recall never sees a mix of models.
 */
export async function reembedTenant(
  pool: pg.Pool,
  embedder: Embedder,
  tenantId: string,
  options: { pageSize: number; onProgress?: (progress: EmbedGoalsProgress) => void },
): Promise<ReembedResult> {
  const droppedGoalEmbeddings = await forgetOtherModels(pool, tenantId, embedder.modelId);
  const goals = await embedMissingGoals(pool, embedder, tenantId, { pageSize: options.pageSize, onProgress: options.onProgress });
  const procedures = (await listProcedures(pool, tenantId)).filter((procedure) => procedure.embeddingModel !== embedder.modelId);
  const vectors = await embedder.embed(
    procedures.map((procedure) => procedure.whenToUse),
    'goal',
  );
  if (procedures.length > 0) await ensureRecallIndex(pool, embedder.dimension);
  await withTransaction(pool, async (client) => {
    for (const [index, procedure] of procedures.entries()) {
      await replaceProcedureEmbedding(client, tenantId, procedure, vectors[index]!, embedder.modelId);
      await storeLearnedGoalVectors(client, tenantId, procedure.id, embedder.modelId);
    }
    await forgetOtherRecallModels(client, tenantId, embedder.modelId);
  });
  return {
    tenantId,
    modelId: embedder.modelId,
    dimension: embedder.dimension,
    droppedGoalEmbeddings,
    embeddedGoals: goals.embedded,
    reembeddedProcedures: procedures.length,
  };
}
