import { Context, heartbeat } from '@temporalio/activity';
import { embedMissingGoals, type EmbedGoalsResult } from '../src/embedding/embed-goals.ts';
import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';

export interface EmbedGoalsInput {
  tenantId: string;
  /** Only these runs (small, targeted calls); omitted = every run of the tenant without an embedding. */
  runIds?: string[];
}

export type EmbedActivityDependencies = Pick<ActivityDependencies, 'pool' | 'config' | 'embedder'>;

/**
 * EMBED step: goals without a cached embedding, page by page, heartbeating `{ embedded, total }`
 * (a cancel reaches it between pages; what was written stays, it is reused). Counts only
 * through workflow history, never vectors or goals. A missing model or a dimension that differs
 * from the stored one is not retried.
 */
export const createEmbedActivities = ({ pool, config, embedder }: EmbedActivityDependencies) => ({
  async embedGoals(input: EmbedGoalsInput): Promise<EmbedGoalsResult> {
    const context = Context.current();
    // The tenant's model (src/app/tenant-config.ts), loaded on a worker's first embed: seconds
    // without progress to report, heartbeating meanwhile so that a short heartbeat timeout holds.
    const tenantEmbedder = await whileHeartbeating(() => embedder(input.tenantId));
    return embedMissingGoals(pool, tenantEmbedder, input.tenantId, {
      runIds: input.runIds,
      // Several embedder batches per page; one page must stay well inside the heartbeat
      // timeout (the test model embeds ~400-600 goals/s on 2 cores).
      pageSize: Math.max(config.embedding.batchSize, 256),
      signal: context.cancellationSignal,
      onProgress: (progress) => heartbeat(progress),
    });
  },
});
