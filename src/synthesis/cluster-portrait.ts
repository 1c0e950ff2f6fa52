import type { ClusterPassResult, GoalCluster } from '../clustering/cluster-pass.ts';
import { dot } from '../clustering/cosine.ts';
import type { QualificationThresholds } from '../clustering/qualification.ts';
import { loadGoalEmbeddings } from '../embedding/goal-embedding-repository.ts';
import { selectRunGoals, selectRunsForExtraction } from '../runs/run-repository.ts';
import type { Queryable } from '../store/database.ts';
import type { PassCluster } from './pass-cluster.ts';
import { clipLine } from './skill-naming.ts';
import { buildConsensusProcedure } from '../clustering/consensus-procedure.ts';

/**
 * What a cluster is, for a person tuning τ (`skillsmith clusters`): its most typical goal, the
 * tool sequence its successful runs share, the cluster its goals are nearest to, and the
 * verdict in words. The pass never needs these, so they are computed here, after clustering.
 */
export interface ClusterPortrait {
  /** The medoid by goal embedding: the member whose goal has the highest mean cosine to the others. */
  typicalRunId: string;
  typicalGoal: string;
  /** The consensus of the successful runs' tools (retries collapsed); [] when none succeeded. */
  consensusTools: string[];
  /** The other cluster whose goal centroid is closest to this one's; null when there is no other. */
  nearestClusterId: string | null;
  /** The cosine of the two goal centroids (unit-normalised), rounded to 3 decimals. */
  nearestSimilarity: number | null;
  /** Why it does or does not qualify, with the measured values against the thresholds. */
  verdict: string;
}

export interface PortrayedRun {
  vector: Float32Array;
  successfulTools: string[];
}

function sum(vectors: Float32Array[]): Float32Array {
  const total = new Float32Array(vectors[0]?.length ?? 0);
  for (const vector of vectors) for (let k = 0; k < vector.length; k++) total[k]! += vector[k]!;
  return total;
}

function unit(vector: Float32Array): Float32Array {
  const norm = Math.sqrt(dot(vector, vector));
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

/**
 * The medoid under cosine of unit vectors: Σ_j cos(v_i, v_j) = v_i · Σ_j v_j, so the member with
 * the largest dot product with the members' sum is the exact medoid, in one pass over them.
 * Ties go to the smallest run id, so the answer does not depend on the order of the members.
 */
export function medoidRunId(runIds: readonly string[], vectors: readonly Float32Array[]): string {
  const total = sum([...vectors]);
  let best = runIds[0]!;
  let bestScore = -Infinity;
  runIds.forEach((runId, index) => {
    const score = dot(vectors[index]!, total);
    if (score > bestScore || (score === bestScore && runId < best)) {
      best = runId;
      bestScore = score;
    }
  });
  return best;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(0)}%`;
}

export function verdictOf(cluster: GoalCluster, thresholds: QualificationThresholds): string {
  if (!cluster.qualifies) return `does not qualify: ${cluster.reason?.message ?? 'below the thresholds'}`;
  return (
    `qualifies (rank ${cluster.rank}): ${cluster.successfulRuns} successful runs ≥ ${thresholds.minOccurrences}, ` +
    `success ${percent(cluster.successRate)} ≥ ${percent(thresholds.minSuccessRate)}, ` +
    `longest sequence ${cluster.longestSuccessfulSequence} ≥ ${thresholds.minSteps} steps`
  );
}

/** Portraits of the clusters, in their order, from each member's goal vector and successful tools. */
export function portrayClusters(
  clusters: readonly GoalCluster[],
  runs: ReadonlyMap<string, PortrayedRun>,
  goals: ReadonlyMap<string, string>,
  thresholds: QualificationThresholds,
): ClusterPortrait[] {
  const member = (runId: string) => {
    const run = runs.get(runId);
    if (!run) throw new Error(`run ${runId} of a cluster has no goal embedding to portray it with`);
    return run;
  };
  const centroids = clusters.map((cluster) => unit(sum(cluster.runIds.map((runId) => member(runId).vector))));
  return clusters.map((cluster, index) => {
    const typicalRunId = medoidRunId(
      cluster.runIds,
      cluster.runIds.map((runId) => member(runId).vector),
    );
    const successful = new Set(cluster.successfulRunIds);
    const procedure = buildConsensusProcedure(
      cluster.runIds
        .filter((runId) => successful.has(runId))
        .map((runId) => ({
          runId,
          goal: '',
          toolCalls: member(runId).successfulTools.map((tool) => ({ tool, success: true })),
        })),
    );
    let nearest: { clusterId: string; similarity: number } | null = null;
    clusters.forEach((other, otherIndex) => {
      if (otherIndex === index) return;
      const similarity = dot(centroids[index]!, centroids[otherIndex]!);
      if (nearest === null || similarity > nearest.similarity) nearest = { clusterId: other.clusterId, similarity };
    });
    const found = nearest as { clusterId: string; similarity: number } | null;
    return {
      typicalRunId,
      typicalGoal: goals.get(typicalRunId) ?? '',
      consensusTools: procedure.steps.filter((step) => !step.optional).map((step) => step.tool),
      nearestClusterId: found?.clusterId ?? null,
      nearestSimilarity: found ? Math.round(found.similarity * 1000) / 1000 : null,
      verdict: verdictOf(cluster, thresholds),
    };
  });
}

/** Loads what the portraits need (the clustered runs' goal vectors and tools, the typical goals) and draws them. */
export async function loadClusterPortraits(
  db: Queryable,
  result: ClusterPassResult,
  thresholds: QualificationThresholds,
): Promise<ClusterPortrait[]> {
  const runIds = [...new Set(result.clusters.flatMap((cluster) => cluster.runIds))];
  if (runIds.length === 0) return [];
  const [embeddings, extracted] = await Promise.all([
    loadGoalEmbeddings(db, result.tenantId, result.modelId, { runIds }),
    selectRunsForExtraction(db, result.tenantId, { since: null, until: null }),
  ]);
  const tools = new Map(extracted.map((run) => [run.runId, run.successfulTools]));
  const runs = new Map(
    embeddings.runIds.map((runId, index) => [runId, { vector: embeddings.vectors[index]!, successfulTools: tools.get(runId) ?? [] }]),
  );
  const portraits = portrayClusters(result.clusters, runs, new Map(), thresholds);
  const goals = await selectRunGoals(
    db,
    result.tenantId,
    portraits.map((portrait) => portrait.typicalRunId),
  );
  return portraits.map((portrait) => ({ ...portrait, typicalGoal: goals.get(portrait.typicalRunId) ?? '' }));
}

/**
 * One line per cluster for the Temporal UI (the static summary of the pass's cluster child): its
 * size, how many succeeded, and its typical goal (the medoid), e.g.
 * `14 runs, 13 succeeded (93%): "Rotate the API key for the payments integration"`.
 */
export async function loadClusterSummaries(
  db: Queryable,
  tenantId: string,
  modelId: string,
  clusters: ReadonlyArray<Pick<PassCluster, 'clusterKey' | 'runIds' | 'size' | 'successful' | 'successRate'>>,
): Promise<Record<string, string>> {
  const runIds = [...new Set(clusters.flatMap((cluster) => cluster.runIds))];
  if (runIds.length === 0) return {};
  const [embeddings, goals] = await Promise.all([
    loadGoalEmbeddings(db, tenantId, modelId, { runIds }),
    selectRunGoals(db, tenantId, runIds),
  ]);
  const vectors = new Map(embeddings.runIds.map((runId, index) => [runId, embeddings.vectors[index]!]));
  const summaries: Record<string, string> = {};
  for (const cluster of clusters) {
    const embedded = cluster.runIds.filter((runId) => vectors.has(runId));
    const typical =
      embedded.length > 0
        ? medoidRunId(
            embedded,
            embedded.map((runId) => vectors.get(runId)!),
          )
        : cluster.runIds[0];
    const goal = typical === undefined ? undefined : goals.get(typical);
    summaries[cluster.clusterKey] =
      `${cluster.size} runs, ${cluster.successful} succeeded (${percent(cluster.successRate)})` +
      (goal ? `: "${clipLine(goal, 120)}"` : '');
  }
  return summaries;
}
