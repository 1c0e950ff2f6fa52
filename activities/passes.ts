import type { ActivityDependencies } from './dependencies.ts';
import { loadClusterSummaries } from '../src/synthesis/cluster-portrait.ts';
import {
  beginPassRecord,
  finishPassRecord,
  lastCompletedPassStart,
  listPassClusters,
  selectClustersToProcess,
  updatePassCounts,
} from '../src/synthesis/pass-repository.ts';
import { passClusterBudget } from '../src/synthesis/synthesis-settings.ts';
import { type PassCounts, type PassRecord, type PassStatus } from '../src/contracts/pass-record.ts';

export interface BeginPassInput {
  tenantId: string;
  passId: string;
  workflowRunId: string;
  full: boolean;
}

export interface BeginPassResult {
  /** The pass does not run: synthesis is disabled in configuration. */
  disabled: boolean;
  since: string | null;
  distiller: 'llm' | 'extractive';
}

export interface SelectedPassClusters {
  /** The clusters to process now, in order. */
  clusterKeys: string[];
  /** Qualifying clusters past the LLM budget, left pending for the pass's continuation. */
  pendingCount: number;
  /**
   * Present when clusters wait past the LLM budget: the pass starts its continuation this many
   * seconds after it ends (absent in histories recorded before continuations).
   */
  continueAfterSeconds?: number;
  /** Per key in `clusterKeys`: size, successes and typical goal, the cluster child's static summary in the UI. */
  clusterSummaries: Record<string, string>;
}

/** The pass's record in Postgres: begun, counted, and ended with its outcome. */
export const createPassActivities = ({
  pool,
  config,
  tenantConfig,
  logger,
}: Pick<ActivityDependencies, 'pool' | 'config' | 'tenantConfig' | 'logger'>) => ({
  async beginPass(input: BeginPassInput): Promise<BeginPassResult> {
    const since = input.full ? null : await lastCompletedPassStart(pool, input.tenantId);
    await beginPassRecord(pool, {
      tenantId: input.tenantId,
      id: input.passId,
      workflowRunId: input.workflowRunId,
      full: input.full,
      since,
      distiller: config.synthesis.distiller,
    });
    if (!config.synthesis.enabled) {
      logger.info(
        { tenantId: input.tenantId, passId: input.passId },
        'synthesis is disabled (SKILLSMITH_SYNTHESIS_ENABLED=false): pass skipped',
      );
    }
    return { disabled: !config.synthesis.enabled, since: since?.toISOString() ?? null, distiller: config.synthesis.distiller };
  },

  /**
   * The clusters to process now, in order — taken over from earlier passes first, then by value —
   * every one with the extractive distiller, at most maxClustersPerPass with the LLM; the rest stays
   * pending in pass_clusters for the pass's continuation. With each, the summary its child
   * workflow shows in the UI.
   */
  async selectPassClusters(input: { tenantId: string; passId: string }): Promise<SelectedPassClusters> {
    const tenant = await tenantConfig(input.tenantId);
    const selected = await selectClustersToProcess(pool, input.tenantId, input.passId, passClusterBudget(tenant.synthesis));
    const clusterSummaries = await loadClusterSummaries(
      pool,
      input.tenantId,
      tenant.embedding.model,
      await listPassClusters(pool, input.tenantId, input.passId, selected.clusterKeys),
    );
    return {
      clusterKeys: selected.clusterKeys,
      pendingCount: selected.waiting,
      clusterSummaries,
      ...(selected.waiting > 0 ? { continueAfterSeconds: tenant.synthesis.continuationDelaySeconds } : {}),
    };
  },

  async recordPassCounts(input: { tenantId: string; passId: string; counts: Partial<PassCounts> }): Promise<void> {
    await updatePassCounts(pool, input.tenantId, input.passId, input.counts);
  },

  async finishPass(input: {
    tenantId: string;
    passId: string;
    status: Exclude<PassStatus, 'running'>;
    outcome: string | null;
    /** What a pass that ends early reached (the workflow's progress): kept in its record. */
    counts?: Partial<PassCounts>;
  }): Promise<PassRecord> {
    if (input.counts) await updatePassCounts(pool, input.tenantId, input.passId, input.counts);
    const record = await finishPassRecord(pool, input.tenantId, input.passId, input.status, input.outcome);
    const log = { tenantId: input.tenantId, passId: input.passId, status: record.status, outcome: record.outcome, counts: record.counts };
    if (record.status === 'failed' || record.outcome?.startsWith('skipped: llm'))
      logger.error(log, `synthesis pass ${record.status}: ${record.outcome}`);
    else logger.info(log, `synthesis pass ${record.status}`);
    return record;
  },
});
