/**
 * A cluster that holds several procedure variants, each followed exactly by enough successful
 * runs to be a procedure of its own, is either one procedure with an optional step (or a loop)
 * or several procedures that the similarity cut could not tell apart. The runs say which: when
 * the variant a run followed is predicted by its goal — nearly every run's goal is closer, on
 * average, to the other goals of its own variant than to those of any other variant — and that
 * agreement beats the same variants shuffled among the same goals (a permutation test, so a few
 * runs agreeing by chance do not count), the goal decided the steps, and the variants are
 * different procedures (hotels and taxis vs taxis alone; a flight's details or not). When the goal
 * does not predict it (an agent sometimes posts to Slack, sometimes not, whatever the wording; a
 * loop whose count the wording does not give away), the variants are one procedure with optional
 * or repeated steps, and the cluster stays whole. The test reads goals and tool sequences only,
 * never labels; it runs after the cut, on each cluster (post-processing, like qualification).
 */
import { createSeededRandom } from '../runs/seeded-random.ts';
import { dot } from './cosine.ts';

/** Share of the variants' runs whose nearest goal followed the same variant, for the goal to decide the variant. */
export const GOAL_DETERMINES_VARIANT = 0.9;
/**
 * Shuffles of the variant labels the observed agreement is compared with, and the chance it may
 * have left: none of them may reach it. At 0.01 with 199 shuffles a 3-run variant of a generated
 * family still agreed by chance (test/clustering/procedure-families.test.ts).
 */
const PERMUTATIONS = 999;
/** Variants a cluster is tested for (the largest): bounds the test on a cluster of many procedures. */
const MAX_VARIANTS = 8;
/** Runs of each variant the test reads (bounds its cost on large clusters: O((variants × this)²) per shuffle). */
const EVIDENCE_PER_VARIANT = 40;
const SIGNIFICANCE = 0.001;

export interface VariantRuns {
  /** Goal vectors (unit length), by run index. */
  vectors: readonly Float32Array[];
  /** The exact procedure (distinct successful tool sequence) each run followed, by run index. */
  traceOf: (run: number) => number;
  /** Runs that count as a successful sequence (the only evidence of a variant). */
  successful: (run: number) => boolean;
  /** Distance of two runs under the clustering's similarity (to place the other runs). */
  distance: (a: number, b: number) => number;
}

/**
 * Splits one cluster (run indices) into its goal-determined variants, each with the runs nearest
 * to it; returns the cluster unchanged when fewer than two variants have `minRuns` successful
 * runs or the goals do not predict the variant. Deterministic in the order of `cluster`.
 */
export function splitGoalDeterminedVariants(
  cluster: readonly number[],
  runs: VariantRuns,
  minRuns: number,
  agreementShare = GOAL_DETERMINES_VARIANT,
): number[][] {
  const byTrace = new Map<number, number[]>();
  for (const run of cluster) {
    if (!runs.successful(run)) continue;
    const trace = runs.traceOf(run);
    byTrace.set(trace, [...(byTrace.get(trace) ?? []), run]);
  }
  // The largest variants first (ties: the one met first), at most MAX_VARIANTS of them.
  const variants = [...byTrace.values()]
    .filter((members) => members.length >= minRuns)
    .sort((a, b) => b.length - a.length || a[0]! - b[0]!)
    .slice(0, MAX_VARIANTS);
  if (variants.length < 2) return [[...cluster]];
  const variantOf = new Map<number, number>();
  variants.forEach((members, index) => members.forEach((run) => variantOf.set(run, index)));
  // The evidence: up to EVIDENCE_PER_VARIANT runs of each variant (the first, in cluster order).
  const evidence = variants.flatMap((members) => members.slice(0, EVIDENCE_PER_VARIANT));
  const cosines = evidence.map((run) => evidence.map((other) => dot(runs.vectors[run]!, runs.vectors[other]!)));
  // Leave-one-out nearest variant: a run's goal is closer on average to the other goals of its own
  // variant than to those of any other variant.
  const agreement = (labels: readonly number[]) => {
    const sizes = new Array<number>(variants.length).fill(0);
    for (const label of labels) sizes[label]! += 1;
    let agreeing = 0;
    labels.forEach((label, index) => {
      const sums = new Array<number>(variants.length).fill(0);
      cosines[index]!.forEach((cosine, other) => {
        if (other !== index) sums[labels[other]!]! += cosine;
      });
      const own = sums[label]! / (sizes[label]! - 1);
      if (sums.every((sum, variant) => variant === label || sum / sizes[variant]! < own)) agreeing += 1;
    });
    return agreeing;
  };
  const labels = evidence.map((run) => variantOf.get(run)!);
  const observed = agreement(labels);
  if (observed < agreementShare * evidence.length) return [[...cluster]];
  // A few runs can agree by chance: the agreement must also beat the variants shuffled among the
  // same goals (a permutation test, seeded by the cluster so a pass is reproducible).
  const random = createSeededRandom(cluster.length * 7919 + evidence.length);
  let asHigh = 0;
  for (let permutation = 0; permutation < PERMUTATIONS; permutation++) {
    if (agreement(random.shuffle(labels)) >= observed) asHigh += 1;
  }
  if ((asHigh + 1) / (PERMUTATIONS + 1) > SIGNIFICANCE) return [[...cluster]];
  const parts = variants.map((members) => [...members]);
  for (const run of cluster) {
    if (variantOf.has(run)) continue;
    let nearestVariant = 0;
    let best = Infinity;
    for (const [run2, index] of variantOf) {
      const distance = runs.distance(run, run2);
      if (distance < best || (distance === best && index < nearestVariant)) {
        best = distance;
        nearestVariant = index;
      }
    }
    parts[nearestVariant]!.push(run);
  }
  return parts.map((part) => part.sort((a, b) => a - b));
}

/** Every cluster split into its goal-determined variants; clusters ordered by their first run, as clusterRuns orders them. */
export function splitClustersByGoalDeterminedVariants(
  clusters: readonly number[][],
  runs: VariantRuns,
  minRuns: number,
  agreementShare = GOAL_DETERMINES_VARIANT,
): number[][] {
  return clusters.flatMap((cluster) => splitGoalDeterminedVariants(cluster, runs, minRuns, agreementShare)).sort((a, b) => a[0]! - b[0]!);
}
