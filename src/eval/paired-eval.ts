import { createHash } from 'node:crypto';
import { clopperPearsonInterval, type ProportionInterval } from '../rollout/clopper-pearson.ts';
import { checkPairedEvidence, type Combination, type PairedSample, type RolloutCheck } from '../rollout/paired-evidence.ts';

/**
 * `skillsmith eval --paired`: an offline estimate of what recall changes, not a live A/B. Each
 * held-out goal comes with the tool sequence its original run took (the arm without recall) and
 * its gold sequence; the arm with recall follows the recalled procedure's tool sequence, or does
 * what the original run did when nothing is recalled. "Completed" is "the tool sequence equals
 * the gold sequence"; policy failures are not observable offline and are recorded as 0.
 */

/** A held-out goal as the paired comparison sees it. */
export interface PairedGoalInput {
  goal: string;
  family: string;
  /** The original run's tool names, in order. */
  tools: readonly string[];
  /** The gold tool sequence for the goal. */
  gold: readonly string[];
  /** The first recalled procedure's name and tool sequence, or null when recall returned nothing. */
  recalled: { name: string; tools: readonly string[] } | null;
}

export interface PairedGoal {
  caseId: string;
  goal: string;
  family: string;
  originalSteps: number;
  recalled: string | null;
  recalledSteps: number | null;
  /** originalSteps minus the steps with recall (the recalled procedure's, else the original run's). */
  stepReduction: number;
  originalMatchesGold: boolean;
  /** Null when nothing was recalled. */
  recalledMatchesGold: boolean | null;
}

export interface MeanInterval {
  mean: number;
  /** Normal-approximation 95 % interval of the mean (mean ± 1.96·s/√n); the mean itself when n < 2. */
  interval: { lower: number; upper: number };
}

export interface PairedEvalReport {
  combination: Combination;
  goals: number;
  recalled: number;
  stepReduction: MeanInterval;
  /** Share of goals whose tool sequence matches the gold one, without and with recall (Clopper–Pearson 95 %). */
  matchRate: {
    withoutRecall: { matched: number; rate: number; interval: ProportionInterval | null };
    withRecall: { matched: number; rate: number; interval: ProportionInterval | null };
  };
  /** What `skillsmith rollout check` says of the pairs written. */
  check: RolloutCheck;
  perGoal: PairedGoal[];
}

/** The standard normal's 97.5 % quantile. */
const Z_95 = 1.959963984540054;

const sameSequence = (left: readonly string[], right: readonly string[]) =>
  left.length === right.length && left.every((tool, index) => tool === right[index]);

/** The same goal is the same case: a re-run's pair records as unchanged, or is refused if its outcome differs. */
const pairedCaseId = (goal: string): string => `goal-${createHash('sha256').update(goal).digest('hex').slice(0, 16)}`;

function meanInterval(values: readonly number[]): MeanInterval {
  const n = values.length;
  const mean = n === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / n;
  if (n < 2) return { mean, interval: { lower: mean, upper: mean } };
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1);
  const half = (Z_95 * Math.sqrt(variance)) / Math.sqrt(n);
  return { mean, interval: { lower: mean - half, upper: mean + half } };
}

const matchRate = (matched: number, n: number) => ({
  matched,
  rate: n === 0 ? 0 : matched / n,
  interval: n === 0 ? null : clopperPearsonInterval(matched, n),
});

export function comparePaired(
  inputs: readonly PairedGoalInput[],
  combination: Combination,
): { report: PairedEvalReport; pairs: PairedSample[] } {
  const perGoal = inputs.map((input): PairedGoal => {
    const originalMatchesGold = sameSequence(input.tools, input.gold);
    const recalledSteps = input.recalled?.tools.length ?? null;
    return {
      caseId: pairedCaseId(input.goal),
      goal: input.goal,
      family: input.family,
      originalSteps: input.tools.length,
      recalled: input.recalled?.name ?? null,
      recalledSteps,
      stepReduction: input.tools.length - (recalledSteps ?? input.tools.length),
      originalMatchesGold,
      recalledMatchesGold: input.recalled ? sameSequence(input.recalled.tools, input.gold) : null,
    };
  });
  const pairs = perGoal.map((goal): PairedSample => ({
    caseId: goal.caseId,
    baselineCompleted: goal.originalMatchesGold,
    authoredCompleted: goal.recalledMatchesGold ?? goal.originalMatchesGold,
    baselinePolicyFailures: 0,
    authoredPolicyFailures: 0,
    ...combination,
  }));
  const n = pairs.length;
  const check = checkPairedEvidence({
    n,
    b: pairs.filter((pair) => pair.authoredCompleted && !pair.baselineCompleted).length,
    c: pairs.filter((pair) => pair.baselineCompleted && !pair.authoredCompleted).length,
    regressedCases: 0,
    baselinePolicyFailures: 0,
    authoredPolicyFailures: 0,
  });
  return {
    report: {
      combination,
      goals: n,
      recalled: perGoal.filter((goal) => goal.recalled !== null).length,
      stepReduction: meanInterval(perGoal.map((goal) => goal.stepReduction)),
      matchRate: {
        withoutRecall: matchRate(pairs.filter((pair) => pair.baselineCompleted).length, n),
        withRecall: matchRate(pairs.filter((pair) => pair.authoredCompleted).length, n),
      },
      check,
      perGoal,
    },
    pairs,
  };
}
