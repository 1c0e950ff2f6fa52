import { z } from 'zod';
import { buildConsensusProcedure } from './consensus-procedure.ts';

/** One run in a cluster, as qualification needs it. */
export const clusterRunSchema = z.object({
  runId: z.string().min(1),
  status: z.enum(['completed', 'failed', 'cancelled']),
  /** Tool calls of the run that succeeded. */
  successfulToolCalls: z.number().int().min(0),
  /** The tools of those calls, in order; when given, the successful runs must share a procedure. */
  successfulTools: z.array(z.string()).optional(),
});
export type ClusterRun = z.infer<typeof clusterRunSchema>;

export interface QualificationThresholds {
  minOccurrences: number;
  minSuccessRate: number;
  minSteps: number;
}

export type DisqualificationCode = 'too_few_successful_runs' | 'too_few_steps' | 'low_success_rate' | 'no_shared_procedure';

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
  /** 1-based rank among qualifying clusters by value (successful runs × success rate), when it qualifies. */
  rank?: number;
  reason?: { code: DisqualificationCode; message: string };
}

/** What a qualifying cluster is worth processing: its successful runs, weighed by how reliably they succeed. */
export function clusterValue(assessment: Pick<ClusterAssessment, 'successfulRuns' | 'successRate'>): number {
  return assessment.successfulRuns * assessment.successRate;
}

/** A run counts as a successful sequence when it completed with ≥ minSteps successful tool calls. */
export function isSuccessfulSequence(run: ClusterRun, minSteps: number): boolean {
  return run.status === 'completed' && run.successfulToolCalls >= minSteps;
}

function formatRate(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/** True when `steps` occur in `tools` in order (other calls may sit between them). */
function takesInOrder(tools: readonly string[], steps: readonly string[]): boolean {
  let next = 0;
  for (const tool of tools) if (next < steps.length && tool === steps[next]) next++;
  return next === steps.length;
}

/**
 * Why the successful runs share no recurring procedure, or undefined when they do: their
 * consensus (the steps most of them took, in the order they share) must itself have ≥ minSteps
 * steps and be taken in that order by ≥ minOccurrences of them. A consensus step that too few runs
 * took for that (an optional step two of three runs happened to take) is set aside, one at a time,
 * as long as ≥ minSteps steps remain: what is shared is what enough runs took. Runs that only
 * happen to read alike and to call ≥ minSteps tools each — off-plan searches and notes in a
 * different order every time — pass the counts but teach no procedure.
 */
function unsharedProcedure(successful: ClusterRun[], thresholds: QualificationThresholds): string | undefined {
  if (successful.some((run) => run.successfulTools === undefined)) return undefined;
  const consensus = buildConsensusProcedure(
    successful.map((run) => ({
      runId: run.runId,
      goal: '',
      toolCalls: run.successfulTools!.map((tool) => ({ tool, success: true })),
    })),
  );
  const core = consensus.steps.filter((step) => !step.optional).map((step) => step.tool);
  const shown = core.join(' → ') || 'no step';
  if (core.length < thresholds.minSteps)
    return `the successful runs share ${core.length} steps (${shown}) < minSteps ${thresholds.minSteps}`;
  const taking = (steps: readonly string[]) => successful.filter((run) => takesInOrder(run.successfulTools!, steps)).length;
  let shared = core;
  while (taking(shared) < thresholds.minOccurrences && shared.length > thresholds.minSteps) {
    // Set aside the step whose absence lets the most runs take the rest (the first such step on a tie).
    const without = shared.map((_, index) => shared.filter((__, other) => other !== index));
    shared = without.reduce((best, steps) => (taking(steps) > taking(best) ? steps : best));
  }
  if (taking(shared) < thresholds.minOccurrences)
    return `only ${taking(core)} of ${successful.length} successful runs take their shared steps in order (${shown}); minOccurrences is ${thresholds.minOccurrences}`;
  return undefined;
}

/**
 * Applies the synthesis thresholds to every cluster: ≥ minOccurrences successful runs (completed
 * with ≥ minSteps successful tool calls), success rate successes / (successes + failed or
 * cancelled runs) ≥ minSuccessRate — completed runs too short to distil count as neither, as in
 * extraction; the qualifying ones are ranked by value (successful runs × success rate, then
 * successful runs, then size). None is dropped here: a pass's budget leaves the rest pending.
 * Every cluster that does not qualify carries the exact reason with the measured numbers.
 */
export function assessClusters(clusters: ClusterRun[][], thresholds: QualificationThresholds): ClusterAssessment[] {
  const assessments = clusters.map((runs, clusterIndex): ClusterAssessment => {
    const successful = runs.filter((run) => isSuccessfulSequence(run, thresholds.minSteps));
    const successfulRuns = successful.length;
    const completedRuns = runs.filter((run) => run.status === 'completed');
    const failedRuns = runs.length - completedRuns.length;
    const tooShortRuns = completedRuns.length - successfulRuns;
    const attempts = successfulRuns + failedRuns;
    const successRate = attempts === 0 ? 0 : successfulRuns / attempts;
    const longestSuccessfulSequence = completedRuns.reduce((longest, run) => Math.max(longest, run.successfulToolCalls), 0);
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
    const unshared = unsharedProcedure(successful, thresholds);
    if (unshared) return { ...base, qualifies: false, reason: { code: 'no_shared_procedure', message: unshared } };
    return { ...base, qualifies: true };
  });

  assessments
    .filter((assessment) => assessment.qualifies)
    .sort(
      (a, b) =>
        clusterValue(b) - clusterValue(a) || b.successfulRuns - a.successfulRuns || b.size - a.size || a.clusterIndex - b.clusterIndex,
    )
    .forEach((assessment, position) => {
      assessment.rank = position + 1;
    });
  return assessments;
}
