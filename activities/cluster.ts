import { heartbeat } from '@temporalio/activity';
import { clusterRunGoals, type ClusterPassResult } from '../src/clustering/cluster-pass.ts';
import type { DisqualificationCode } from '../src/clustering/qualification.ts';
import { recordPassClusters } from '../src/synthesis/pass-repository.ts';
import type { ActivityDependencies } from './dependencies.ts';
import { failFast } from './failures.ts';

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

/**
 * Ids and counts only: at most `maxClustersPerPass` qualifying summaries travel through
 * workflow history, never run ids or vectors.
 */
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
}

export interface ClusterPassGoalsResult {
  clusterCount: number;
  qualifyingCount: number;
  /** Qualifying clusters' keys in rank order (≤ maxClustersPerPass); the rest is in pass_clusters. */
  clusterKeys: string[];
}

export type ClusterActivityDependencies = Pick<ActivityDependencies, 'pool' | 'config'>;

function summarise(result: ClusterPassResult): ClusterGoalsResult {
  const disqualified: Record<DisqualificationCode, number> = {
    too_few_successful_runs: 0,
    too_few_steps: 0,
    low_success_rate: 0,
    over_pass_cap: 0,
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
 * CLUSTER step over the goal embeddings the embed step stored for the configured model
 * (`config.embedding.model`): τ-components, agglomerative clustering per component, thresholds.
 */
export const createClusterActivities = ({ pool, config }: ClusterActivityDependencies) => {
  const cluster = (input: ClusterGoalsInput) =>
    failFast(() =>
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
      return summarise(await cluster(input));
    },

    /** Clusters, records every cluster of the pass in pass_clusters (idempotent), returns the keys to distil. */
    async clusterPassGoals(input: ClusterPassGoalsInput): Promise<ClusterPassGoalsResult> {
      const result = await cluster(input);
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
        })),
      );
      const qualifying = result.clusters.filter((goalCluster) => goalCluster.qualifies);
      return {
        clusterCount: result.clusters.length,
        qualifyingCount: qualifying.length,
        clusterKeys: qualifying.map((goalCluster) => goalCluster.clusterId),
      };
    },
  };
};
