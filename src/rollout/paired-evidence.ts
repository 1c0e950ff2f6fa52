import { z } from 'zod';
import { clopperPearsonInterval } from './clopper-pearson.ts';

/**
 * The 002 spec's release gate ("Rollout evidence"): paired evaluations of the same cases with and
 * without self-authored skills, per model policy, policy profile and authoring implementation
 * version. With b the pairs only the authored arm completed, c the pairs only the baseline
 * completed and n all pairs, the observed paired improvement is (b − c) / n; the two-sided 95 %
 * Clopper–Pearson interval [p_low, p_high] for p = b / (b + c) becomes the paired-difference
 * interval [(2·p_low − 1)(b + c)/n, (2·p_high − 1)(b + c)/n], and [0, 0] without discordant pairs.
 * The gate passes with at least 30 pairs, an improvement of at least 5 points, a lower bound
 * above zero, and no additional policy failure.
 */

export const ROLLOUT_GATE = {
  minimumPairs: 30,
  /** Absolute percentage points of task completion. */
  minimumImprovementPoints: 5,
  confidence: 0.95,
} as const;

/** An identifier written by an evaluation harness: surrounding whitespace would silently split evidence. */
const keySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^\S(?:.*\S)?$/s, 'no leading or trailing whitespace');

/** What evidence is recorded for and never transfers between (the spec's "combination"). */
export const combinationSchema = z.object({
  modelPolicy: keySchema,
  policyProfile: keySchema,
  authoringVersion: keySchema,
});
export type Combination = z.infer<typeof combinationSchema>;

const policyFailuresSchema = z.number().int().min(0).max(2_147_483_647);

/** One line of a pairs file (the contract in DESIGN.md): one evaluation case run by both arms. */
export const pairedSampleSchema = combinationSchema
  .extend({
    caseId: keySchema,
    baselineCompleted: z.boolean(),
    authoredCompleted: z.boolean(),
    baselinePolicyFailures: policyFailuresSchema,
    authoredPolicyFailures: policyFailuresSchema,
  })
  .strict();
export type PairedSample = z.infer<typeof pairedSampleSchema>;

/** The same case recorded again for the same combination changes nothing only when it says the same. */
export function samePairedOutcome(left: PairedSample, right: PairedSample): boolean {
  return (
    left.baselineCompleted === right.baselineCompleted &&
    left.authoredCompleted === right.authoredCompleted &&
    left.baselinePolicyFailures === right.baselinePolicyFailures &&
    left.authoredPolicyFailures === right.authoredPolicyFailures
  );
}

/** What the gate is computed from: counts over one tenant's pairs for one combination. */
export interface PairedCounts {
  /** All pairs. */
  n: number;
  /** Completed by the authored arm only. */
  b: number;
  /** Completed by the baseline only. */
  c: number;
  /** Cases in which the authored arm had more policy failures than the baseline. */
  regressedCases: number;
  baselinePolicyFailures: number;
  authoredPolicyFailures: number;
}

/** The `rollout check` document (DESIGN.md contract); improvement and bounds are fractions, 0.05 = 5 points. */
export interface RolloutCheck {
  n: number;
  b: number;
  c: number;
  improvement: number;
  interval: { lower: number; upper: number };
  policyRegression: boolean;
  passed: boolean;
  /** Why it did not pass, one sentence per unmet criterion; empty when it passed. */
  reasons: string[];
  policyFailures: { baseline: number; authored: number; regressedCases: number };
}

/** The paired-difference interval: the Clopper–Pearson interval for b / (b + c), rescaled by (b + c) / n. */
export function pairedDifferenceInterval(n: number, b: number, c: number): { lower: number; upper: number } {
  const discordant = b + c;
  if (discordant === 0) return { lower: 0, upper: 0 };
  const { lower, upper } = clopperPearsonInterval(b, discordant, ROLLOUT_GATE.confidence);
  return { lower: ((2 * lower - 1) * discordant) / n, upper: ((2 * upper - 1) * discordant) / n };
}

const points = (fraction: number): string => `${(fraction * 100).toFixed(1)} points`;

export function checkPairedEvidence(counts: PairedCounts): RolloutCheck {
  const { n, b, c, regressedCases } = counts;
  if (![n, b, c, regressedCases].every((count) => Number.isInteger(count) && count >= 0) || b + c > n || regressedCases > n) {
    throw new RangeError(`inconsistent paired counts: n=${n}, b=${b}, c=${c}, regressedCases=${regressedCases}`);
  }
  const improvement = n === 0 ? 0 : (b - c) / n;
  const interval = pairedDifferenceInterval(n, b, c);
  const policyRegression = regressedCases > 0;
  const reasons: string[] = [];
  if (n < ROLLOUT_GATE.minimumPairs) {
    reasons.push(`${n} paired samples; at least ${ROLLOUT_GATE.minimumPairs} are required`);
  }
  // Compared in integers: (b − c) / n ≥ 5 / 100 without floating-point rounding at the boundary.
  if (n === 0 || 100 * (b - c) < ROLLOUT_GATE.minimumImprovementPoints * n) {
    reasons.push(`the paired improvement is ${points(improvement)}; at least ${ROLLOUT_GATE.minimumImprovementPoints} points are required`);
  }
  if (!(interval.lower > 0)) {
    reasons.push(`the lower bound of the 95 % paired interval is ${points(interval.lower)}; it must be above zero`);
  }
  if (policyRegression) {
    reasons.push(
      `policy regression: the authored arm had more policy failures than the baseline in ${regressedCases} ` +
        `case${regressedCases === 1 ? '' : 's'}; any additional policy failure blocks rollout`,
    );
  }
  return {
    n,
    b,
    c,
    improvement,
    interval,
    policyRegression,
    passed: reasons.length === 0,
    reasons,
    policyFailures: { baseline: counts.baselinePolicyFailures, authored: counts.authoredPolicyFailures, regressedCases },
  };
}
