import { createHash } from 'node:crypto';
import type { ClusteringSettings } from './clustering-settings.ts';
import { loadGoalEmbeddings } from '../embedding/goal-embedding-repository.ts';
import { selectRunsForExtraction, selectRunWording, type RunWindow } from '../runs/run-repository.ts';
import type { Queryable } from '../store/database.ts';
import { clusterRuns } from './cluster-goals.ts';
import { runsToWord, splitClustersByGoalDeterminedVariants } from './goal-determined-variants.ts';
import { procedureTableFor, runSimilarity } from './run-similarity.ts';
import { assessClusters, isSuccessfulSequence, type ClusterAssessment, type ClusterRun } from './qualification.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { turnTaker } from './event-loop-turns.ts';

export class GoalsNotEmbedded extends SkillsmithError {
  static override readonly code = 'GoalsNotEmbedded';
  static override readonly retryable = false;
  constructor(
    readonly tenantId: string,
    readonly modelId: string,
    readonly missing: number,
    readonly example: string,
  ) {
    super(
      `${missing} run(s) of tenant ${tenantId} have no goal embedding for ${modelId} (e.g. ${example}); ` +
        'the embed step must run before clustering',
    );
  }
}

export interface GoalCluster extends ClusterAssessment {
  /** Stable id: a digest of the member run ids, so a re-run of the same pass names it alike. */
  clusterId: string;
  runIds: string[];
  /** The successful sequences among `runIds` (completed, ≥ minSteps successful tool calls). */
  successfulRunIds: string[];
}

export type ClusterPassStage = 'loading' | 'clustering' | 'qualifying';

export interface ClusterPassResult {
  tenantId: string;
  modelId: string;
  linkage: ClusteringSettings['linkage'];
  /** Goal-cosine τ (the `goal` design's cut, the `gate` design's goal threshold). */
  similarityTau: number;
  /** The run similarity the clustering cut, with the settings it read. */
  similarity: {
    design: ClusteringSettings['clusterSimilarity'];
    clusterTau: number;
    goalWeight: number;
    toolTau: number;
  };
  /** Runs in the window (all embedded). */
  goals: number;
  componentCount: number;
  largestComponentSize: number;
  singletonCount: number;
  /** Every cluster of ≥ 2 runs: qualifying ones first by rank, then the rest by size. */
  clusters: GoalCluster[];
  qualifyingCount: number;
  durationMs: number;
}

export function clusterIdOf(runIds: string[]): string {
  return createHash('sha256')
    .update([...runIds].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/**
 * CLUSTER: the runs in the window under the configured run similarity (goal embedding and the
 * tools of their successful calls), threshold-graph components then agglomerative clustering per
 * component, then the thresholds. Fails loudly when a run has no embedding.
 */
export async function clusterRunGoals(
  db: Queryable,
  tenantId: string,
  options: {
    modelId: string;
    synthesis: ClusteringSettings;
    window?: RunWindow;
    /** Called as each stage starts (the activity heartbeats it). */
    onStage?: (stage: ClusterPassStage) => void;
  },
): Promise<ClusterPassResult> {
  const started = Date.now();
  const { synthesis } = options;
  options.onStage?.('loading');
  const runs = await selectRunsForExtraction(db, tenantId, options.window ?? { since: null, until: null });
  const { runIds, vectors } = await loadGoalEmbeddings(db, tenantId, options.modelId);
  const vectorByRun = new Map(runIds.map((runId, index) => [runId, vectors[index]!]));
  const missing = runs.filter((run) => !vectorByRun.has(run.runId));
  if (missing.length > 0) {
    throw new GoalsNotEmbedded(tenantId, options.modelId, missing.length, missing[0]!.runId);
  }
  options.onStage?.('clustering');
  // Each stage runs synchronously; between stages and between components the worker's other work gets its turn.
  const takeTurn = turnTaker();
  const goalVectors = runs.map((run) => vectorByRun.get(run.runId)!);
  const procedures = procedureTableFor(
    runs.map((run) => ({ tools: run.successfulTools })),
    synthesis.clusterSimilarity,
    synthesis.minOccurrences,
  );
  const similarity = runSimilarity(goalVectors, procedures, {
    design: synthesis.clusterSimilarity,
    goalTau: synthesis.similarityTau,
    clusterTau: synthesis.clusterTau,
    toolTau: synthesis.clusterToolTau,
    goalWeight: synthesis.clusterGoalWeight,
  });
  await takeTurn();
  const clustering = await clusterRuns(goalVectors, similarity, {
    linkage: synthesis.linkage,
    denseComponentLimit: synthesis.clusterDenseComponentLimit,
    takeTurn,
  });
  await takeTurn();
  // A cluster holding procedures its goals tell apart is split into them (goal-determined-variants.ts).
  const variantRuns = {
    vectors: goalVectors,
    traceOf: (run: number) => procedures.traceOfRun[run]!,
    successful: (run: number) =>
      isSuccessfulSequence(
        { runId: runs[run]!.runId, status: runs[run]!.status, successfulToolCalls: runs[run]!.successfulTools.length },
        synthesis.minSteps,
      ),
    distance: similarity.distance,
  };
  // Goal texts and argument names are read only for the clusters whose split reads them.
  const worded = runsToWord(
    clustering.clusters,
    { ...variantRuns, toolsOf: (run) => runs[run]!.successfulTools },
    synthesis.minOccurrences,
  );
  const wording = await selectRunWording(
    db,
    tenantId,
    worded.map((run) => runs[run]!.runId),
  );
  const wordingOf = (run: number) => wording.get(runs[run]!.runId) ?? { goal: '', calls: [] };
  const cut = splitClustersByGoalDeterminedVariants(
    clustering.clusters,
    { ...variantRuns, wording: { goal: (run) => wordingOf(run).goal, calls: (run) => wordingOf(run).calls } },
    synthesis.minOccurrences,
  );
  const members: ClusterRun[][] = cut.map((cluster) =>
    cluster.map((index) => {
      const run = runs[index]!;
      return {
        runId: run.runId,
        status: run.status,
        successfulToolCalls: run.successfulTools.length,
        successfulTools: run.successfulTools,
      };
    }),
  );
  options.onStage?.('qualifying');
  await takeTurn();
  const assessments = assessClusters(members, synthesis);
  const clusters: GoalCluster[] = assessments.map((assessment) => {
    const clusterRuns = members[assessment.clusterIndex]!;
    const clusterRunIds = clusterRuns.map((run) => run.runId);
    return {
      ...assessment,
      clusterId: clusterIdOf(clusterRunIds),
      runIds: clusterRunIds,
      successfulRunIds: clusterRuns.filter((run) => isSuccessfulSequence(run, synthesis.minSteps)).map((run) => run.runId),
    };
  });
  clusters.sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || b.size - a.size || a.clusterId.localeCompare(b.clusterId));
  return {
    tenantId,
    modelId: options.modelId,
    linkage: synthesis.linkage,
    similarityTau: synthesis.similarityTau,
    similarity: {
      design: synthesis.clusterSimilarity,
      clusterTau: synthesis.clusterTau,
      goalWeight: synthesis.clusterGoalWeight,
      toolTau: synthesis.clusterToolTau,
    },
    goals: runs.length,
    componentCount: clustering.componentCount,
    largestComponentSize: clustering.largestComponentSize,
    singletonCount: clustering.singletonCount,
    clusters,
    qualifyingCount: clusters.filter((cluster) => cluster.qualifies).length,
    durationMs: Date.now() - started,
  };
}
