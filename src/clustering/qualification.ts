import { z } from 'zod';

/** One run in a cluster, as qualification needs it. */
export const clusterRunSchema = z.object({
  runId: z.string().min(1),
  status: z.enum(['completed', 'failed', 'cancelled']),
  /** Tool calls of the run that succeeded. */
  successfulToolCalls: z.number().int().min(0),
});
export type ClusterRun = z.infer<typeof clusterRunSchema>;

export interface QualificationThresholds {
  minOccurrences: number;
  minSuccessRate: number;
  minSteps: number;
  maxClustersPerPass: number;
}

export type DisqualificationCode = 'too_few_successful_runs' | 'too_few_steps' | 'low_success_rate' | 'over_pass_cap';

export interface ClusterAssessment {
  /** Stable within a pass: the cluster's position in the input. */
  clusterIndex: number;
  size: number;
  /** Completed runs with ≥ minSteps successful tool calls. */
  successfulRuns: number;
  /** Failed or cancelled runs. */
  failedRuns: number;
  /** Completed runs with fewer than minSteps successful tool calls: neither success nor failure. */
  tooShortRuns: number;
  /** successfulRuns + failedRuns: the denominator of the success rate. */
  attempts: number;
  successRate: number;
  /** Most successful tool calls in one completed run of the cluster. */
  longestSuccessfulSequence: number;
  qualifies: boolean;
  /** 1-based rank among qualifying clusters (before the cap), when it qualified on the thresholds. */
  rank?: number;
  reason?: { code: DisqualificationCode; message: string };
}

/** A run counts as a successful sequence when it completed with ≥ minSteps successful tool calls. */
export function isSuccessfulSequence(run: ClusterRun, minSteps: number): boolean {
  return run.status === 'completed' && run.successfulToolCalls >= minSteps;
}

function formatRate(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/**
 * Applies the synthesis thresholds to every cluster: ≥ minOccurrences successful runs (completed
 * with ≥ minSteps successful tool calls), success rate successes / (successes + failed or
 * cancelled runs) ≥ minSuccessRate — completed runs too short to distil count as neither, as in
 * extraction; the qualifying ones are ranked (most
 * successful runs, then highest success rate, then size) and capped at maxClustersPerPass.
 * Every cluster that does not qualify carries the exact reason with the measured numbers.
 */
export function assessClusters(clusters: ClusterRun[][], thresholds: QualificationThresholds): ClusterAssessment[] {
  const assessments = clusters.map((runs, clusterIndex): ClusterAssessment => {
    const successfulRuns = runs.filter((run) => isSuccessfulSequence(run, thresholds.minSteps)).length;
    const completedRuns = runs.filter((run) => run.status === 'completed');
    const failedRuns = runs.length - completedRuns.length;
    const tooShortRuns = completedRuns.length - successfulRuns;
    const attempts = successfulRuns + failedRuns;
    const successRate = attempts === 0 ? 0 : successfulRuns / attempts;
    const longestSuccessfulSequence = completedRuns.reduce(
      (longest, run) => Math.max(longest, run.successfulToolCalls),
      0,
    );
    const base = {
      clusterIndex,
      size: runs.length,
      successfulRuns,
      failedRuns,
      tooShortRuns,
      attempts,
      successRate,
      longestSuccessfulSequence,
    };
    if (successfulRuns < thresholds.minOccurrences) {
      if (completedRuns.length >= thresholds.minOccurrences) {
        return {
          ...base,
          qualifies: false,
          reason: {
            code: 'too_few_steps',
            message:
              `only ${successfulRuns} of ${completedRuns.length} completed runs have ≥ minSteps ${thresholds.minSteps} ` +
              `successful tool calls (longest: ${longestSuccessfulSequence}); minOccurrences is ${thresholds.minOccurrences}`,
          },
        };
      }
      return {
        ...base,
        qualifies: false,
        reason: {
          code: 'too_few_successful_runs',
          message: `${successfulRuns} successful runs < minOccurrences ${thresholds.minOccurrences}`,
        },
      };
    }
    if (successRate < thresholds.minSuccessRate) {
      return {
        ...base,
        qualifies: false,
        reason: {
          code: 'low_success_rate',
          message:
            `success rate ${formatRate(successRate)} (${successfulRuns}/${attempts}) < minSuccessRate ` +
            `${formatRate(thresholds.minSuccessRate)}`,
        },
      };
    }
    return { ...base, qualifies: true };
  });

  const ranked = assessments
    .filter((assessment) => assessment.qualifies)
    .sort(
      (a, b) =>
        b.successfulRuns - a.successfulRuns ||
        b.successRate - a.successRate ||
        b.size - a.size ||
        a.clusterIndex - b.clusterIndex,
    );
  ranked.forEach((assessment, position) => {
    assessment.rank = position + 1;
    if (position >= thresholds.maxClustersPerPass) {
      assessment.qualifies = false;
      assessment.reason = {
        code: 'over_pass_cap',
        message: `ranked ${position + 1} of ${ranked.length} qualifying clusters; maxClustersPerPass is ${thresholds.maxClustersPerPass}`,
      };
    }
  });
  return assessments;
}
