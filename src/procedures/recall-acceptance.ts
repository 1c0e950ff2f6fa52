/**
 * A procedure's own acceptance for recall: how close a goal must come to the goals the procedure
 * was learned from before recall returns it. One global threshold asks every procedure for the
 * same cosine, yet the goals of a templated job sit close to each other while those of a job people
 * phrase freely spread out — and a goal of another kind that happens to clear the global threshold
 * against a tight procedure is nothing like that procedure's genuine goals. The procedure's own
 * evidence says how close is close: leave each learned goal out in turn and take its nearest
 * remaining goal's cosine — exactly how recall scores a new goal of the job (its best cosine over
 * the learned goals). The loosest of these is as far as a genuine goal of the job has been seen to
 * lie; recall accepts a goal within a slack of it (bench/results/2026-12-01-recall-threshold-and-acceptance.md calibrates the slack). Reads
 * only the procedure's goal vectors, never a family label.
 */

// Goal embeddings are unit vectors: their dot product is their cosine, as recall's SQL scores them.
import { dot } from '../clustering/cosine.ts';

/** The slack's default: calibrated on both eval corpora (bench/results/2026-12-01-recall-threshold-and-acceptance.md). */
export const DEFAULT_ACCEPTANCE_SLACK = 0.05;

/**
 * The highest acceptance any procedure may ask (all-MiniLM-L6-v2's scale;
 * bench/results/2026-12-01-recall-threshold-and-acceptance.md, "Near-copy goals"). Goals generated from one template sit at 0.7–0.9 of each other, so their
 * loosest cosine less the slack asks a new goal of the job to be nearly a copy too, while people
 * phrase the job more freely than the template; the evidence supports no bar above the cosines
 * unrelated goals reach (the highest negative 0.50), plus the slack.
 */
export const ACCEPTANCE_CAP = 0.55;

/** Distinct goals read per procedure: the leave-one-out scan is quadratic in them. */
export const ACCEPTANCE_SAMPLE = 400;

/** Vectors this close are one goal (the same text embedded twice): a repeat says nothing about how far a new goal may lie. */
const SAME_GOAL = 0.9999;

/** The leave-one-out nearest-neighbour cosine of each distinct goal among the others. */
export function leaveOneOutNearest(goals: readonly Float32Array[]): number[] {
  const distinct: Float32Array[] = [];
  for (const goal of goals) if (!distinct.some((other) => dot(goal, other) >= SAME_GOAL)) distinct.push(goal);
  if (distinct.length < 2) return [];
  return distinct.map((goal, index) => {
    let nearest = -1;
    for (const [other, vector] of distinct.entries()) if (other !== index) nearest = Math.max(nearest, dot(goal, vector));
    return nearest;
  });
}

/** The loosest leave-one-out nearest-neighbour cosine: null with fewer than two distinct goals (no evidence). */
export function loosestNearest(goals: readonly Float32Array[]): number | null {
  const nearest = leaveOneOutNearest(goals);
  return nearest.length === 0 ? null : Math.min(...nearest);
}

export interface AcceptanceSettings {
  /** How far below the loosest leave-one-out cosine a goal may still score. */
  slack: number;
  /** Never accept below this (the model's recall threshold). */
  floor: number;
  /** Never ask more than this (ACCEPTANCE_CAP): near-copy learned goals must not demand a near-copy goal. */
  cap: number;
}

/**
 * The best cosine a goal needs for recall to return the procedure: max(floor, min(cap, loosest −
 * slack)), the floor without evidence.
 */
export function procedureAcceptance(goals: readonly Float32Array[], { slack, floor, cap }: AcceptanceSettings): number {
  const loosest = loosestNearest(goals);
  return loosest === null ? floor : Math.max(floor, Math.min(cap, loosest - slack));
}
