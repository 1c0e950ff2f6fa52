import { heartbeat } from '@temporalio/activity';
import { whileHeartbeating } from './heartbeat.ts';
import type { Config } from '../src/app/config.ts';
import { clusterRunGoals, type ClusterPassResult } from '../src/clustering/cluster-pass.ts';
import { clusterValue, type DisqualificationCode } from '../src/clustering/qualification.ts';
import { carryPendingClusters, recordPassClusters } from '../src/synthesis/pass-repository.ts';
import type { ActivityDependencies } from './dependencies.ts';

export interface ClusterGoalsInput {
  tenantId: string;
  /** The extraction window (ISO times) the pass works on; null/omitted = unbounded. */
  since?: string | null;
  until?: string | null;
}

export interface QualifyingClusterSummary {
  clusterId: string;
  rank: number;
  size: number;
  successfulRuns: number;
  attempts: number;
  successRate: number;
}

/** Ids and counts only: never run ids or vectors. */
export interface ClusterGoalsResult {
  tenantId: string;
  modelId: string;
  goals: number;
  componentCount: number;
  largestComponentSize: number;
  clusterCount: number;
  singletonCount: number;
  qualifying: QualifyingClusterSummary[];
  disqualified: Record<DisqualificationCode, number>;
  durationMs: number;
}

export interface ClusterPassGoalsInput extends ClusterGoalsInput {
  passId: string;
  /** A full pass re-clusters every run, so it takes over no cluster an earlier pass left pending. */
  full?: boolean;
}

export interface ClusterPassRunsResult {
  clusterCount: number;
  /** Qualifying clusters this pass found (not counting carried ones). */
  qualifyingCount: number;
  /** Pending clusters of earlier passes this pass took over. */
  carriedCount: number;
}

/** clusterPassRuns, the reconcile step's settling and selectPassClusters in one: the cluster step of histories before SETTLE_IN_RECONCILE_PATCH. */
export interface ClusterPassGoalsResult {
  clusterCount: number;
  /** Qualifying clusters this pass found (not counting carried ones). */
  qualifyingCount: number;
  /**
   * The clusters to process now, in order — taken over from earlier passes first, then by value —
   * at most maxClustersPerPass; the rest stays pending in pass_clusters.
   */
  clusterKeys: string[];
  /** Pending clusters of earlier passes this pass took over. */
  carriedCount?: number;
  /** Qualifying clusters past the budget, left pending for the next pass. */
  pendingCount?: number;
  /** Present when clusters wait past the LLM budget: the pass's continuation starts this many seconds after it ends. */
  continueAfterSeconds?: number;
  /** Per key in `clusterKeys`: size, successes and typical goal, the cluster child's static summary in the UI. */
  clusterSummaries?: Record<string, string>;
}

export type ClusterActivityDependencies = Pick<ActivityDependencies, 'pool' | 'tenantConfig'>;

function summarise(result: ClusterPassResult): ClusterGoalsResult {
  const disqualified: Record<DisqualificationCode, number> = {
    too_few_successful_runs: 0,
    too_few_steps: 0,
    low_success_rate: 0,
    no_shared_procedure: 0,
  };
  for (const cluster of result.clusters) if (cluster.reason) disqualified[cluster.reason.code] += 1;
  return {
    tenantId: result.tenantId,
    modelId: result.modelId,
    goals: result.goals,
    componentCount: result.componentCount,
    largestComponentSize: result.largestComponentSize,
    clusterCount: result.clusters.length,
    singletonCount: result.singletonCount,
    qualifying: result.clusters
      .filter((cluster) => cluster.qualifies)
      .map((cluster) => ({
        clusterId: cluster.clusterId,
        rank: cluster.rank!,
        size: cluster.size,
        successfulRuns: cluster.successfulRuns,
        attempts: cluster.attempts,
        successRate: cluster.successRate,
      })),
    disqualified,
    durationMs: result.durationMs,
  };
}

/**
 * CLUSTER step over the goal embeddings the embed step stored for the tenant's model
 * (src/app/tenant-config.ts), at that model's τ and cut: τ-components, agglomerative
 * clustering per component, thresholds.
 */
export const createClusterActivities = ({ pool, tenantConfig }: ClusterActivityDependencies) => {
  // The stage heartbeats alone leave a large stage silent for minutes: heartbeat on a timer meanwhile.
  const cluster = (input: ClusterGoalsInput, config: Config) =>
    whileHeartbeating(() =>
      clusterRunGoals(pool, input.tenantId, {
        modelId: config.embedding.model,
        synthesis: config.synthesis,
        window: {
          since: input.since ? new Date(input.since) : null,
          until: input.until ? new Date(input.until) : null,
        },
        onStage: (stage) => heartbeat({ stage }),
      }),
    );

  return {
    /** Clusters and summarises; writes nothing (the `skillsmith clusters` dry run's activity twin). */
    async clusterGoals(input: ClusterGoalsInput): Promise<ClusterGoalsResult> {
      return summarise(await cluster(input, await tenantConfig(input.tenantId)));
    },

    /**
     * Clusters and records every cluster of the pass in pass_clusters (idempotent), and takes over
     * what earlier passes left pending.
     */
    async clusterPassRuns(input: ClusterPassGoalsInput): Promise<ClusterPassRunsResult> {
      const config = await tenantConfig(input.tenantId);
      const result = await cluster(input, config);
      await recordPassClusters(
        pool,
        input.tenantId,
        input.passId,
        result.clusters.map((goalCluster) => ({
          clusterKey: goalCluster.clusterId,
          rank: goalCluster.rank ?? null,
          runIds: goalCluster.runIds,
          successfulRunIds: goalCluster.successfulRunIds,
          size: goalCluster.size,
          successful: goalCluster.successfulRuns,
          successRate: goalCluster.successRate,
          qualifying: goalCluster.qualifies,
          reason: goalCluster.reason?.message ?? null,
          value: goalCluster.qualifies ? clusterValue(goalCluster) : null,
        })),
      );
      const carriedCount = input.full ? 0 : await carryPendingClusters(pool, input.tenantId, input.passId);
      return {
        clusterCount: result.clusters.length,
        qualifyingCount: result.clusters.filter((goalCluster) => goalCluster.qualifies).length,
        carriedCount,
      };
    },
  };
};
