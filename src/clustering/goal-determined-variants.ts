/**
 * A cluster that holds several procedure variants, each followed exactly by enough successful
 * runs to be a procedure of its own, is either one procedure with an optional step (or a loop)
 * or several procedures that the similarity cut could not tell apart. The runs say which: when
 * the variant a run followed is predicted by its goal — nearly every run's goal is closer, on
 * average, to the other goals of its own variant than to those of any other variant — and that
 * agreement beats the same variants shuffled among the same goals (a permutation test, so a few
 * runs agreeing by chance do not count) — or the variants differ only in how many times they repeat
 * a call and nearly every run's goal states its own count ("the policies of these two hotels" vs
 * "three hotels", stated-counts.ts; one word that goal vectors barely register) — the goal decided
 * the steps, and the variants are different procedures (hotels and taxis vs taxis alone; a
 * flight's details or not; two hotels' policies or three). When the goal
 * does not predict it (an agent sometimes posts to Slack, sometimes not, whatever the wording; a
 * loop whose count the wording does not give away), the variants are one procedure with optional
 * or repeated steps, and the cluster stays whole. The test reads goals and tool sequences only,
 * never labels; it runs after the cut, on each cluster (post-processing, like qualification).
 */
import { createSeededRandom } from './seeded-random.ts';
import { dot } from './cosine.ts';
import { groupByShape } from './call-shapes.ts';
import { toolsRepeatedDifferently } from './repeated-tools.ts';
import { callSubjects, statedCounts } from './stated-counts.ts';

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
export const EVIDENCE_PER_VARIANT = 40;
const SIGNIFICANCE = 0.001;
/**
 * The chance left to the goals of call shapes: that the steps were given arguments of other names
 * is evidence of another job already, so the goals need only confirm it — at 0.001 two shapes of
 * 5 runs each could never split (a perfect agreement has 2 of C(10,5) = 252 shuffles).
 */
export const SHAPE_SIGNIFICANCE = 0.05;

export interface VariantRuns {
  /** Goal vectors (unit length), by run index. */
  vectors: readonly Float32Array[];
  /** The exact procedure (distinct successful tool sequence) each run followed, by run index. */
  traceOf: (run: number) => number;
  /** Runs that count as a successful sequence (the only evidence of a variant). */
  successful: (run: number) => boolean;
  /** Distance of two runs under the clustering's similarity (to place the other runs). */
  distance: (a: number, b: number) => number;
  /** The run's goal text and successful calls, for the stated-count test; without them only the goal vectors are read. */
  wording?: {
    goal: (run: number) => string;
    calls: (run: number) => readonly { tool: string; argumentNames: readonly string[] }[];
  };
}

/** The variants a cluster is tested for: its exact procedures with `minRuns` successful runs, largest first. */
function testedVariants(cluster: readonly number[], runs: Pick<VariantRuns, 'traceOf' | 'successful'>, minRuns: number): number[][] {
  const byTrace = new Map<number, number[]>();
  for (const run of cluster) {
    if (!runs.successful(run)) continue;
    const trace = runs.traceOf(run);
    byTrace.set(trace, [...(byTrace.get(trace) ?? []), run]);
  }
  // The largest variants first (ties: the one met first), at most MAX_VARIANTS of them.
  return [...byTrace.values()]
    .filter((members) => members.length >= minRuns)
    .sort((a, b) => b.length - a.length || a[0]! - b[0]!)
    .slice(0, MAX_VARIANTS);
}

/**
 * Runs of a call shape beside a procedure's own for the goals to be asked about it: two runs are no
 * procedure, but two runs given other arguments for goals unlike the procedure's are another job,
 * not part of this one (a board note sent twice beside a weekly digest).
 */
const MIN_SHAPE_RUNS = 2;

/**
 * A variant's runs by call shape (call-shapes.ts), largest first: the groups of MIN_SHAPE_RUNS runs
 * or more, when the largest has `minRuns` (a procedure); else none.
 */
function shapeVariants(variant: readonly number[], wording: NonNullable<VariantRuns['wording']>, minRuns: number): number[][] {
  const groups = groupByShape(variant, (run) => wording.calls(run).map((call) => ({ tool: call.tool, argumentNames: call.argumentNames })));
  if ((groups[0]?.length ?? 0) < minRuns) return [];
  return groups.filter((members) => members.length >= MIN_SHAPE_RUNS).slice(0, MAX_VARIANTS);
}

/**
 * The runs whose wording (goal text, argument names) the split may read: those of the clusters
 * holding several variants that differ only in repeat counts (`toolsOf`: a run's successful calls'
 * tools), for the stated-count test, and those of the clusters of one variant followed by enough
 * runs for a procedure and another call shape beside it, for its call shapes. No other cluster's
 * runs are read.
 */
export function runsToWord(
  clusters: readonly number[][],
  runs: Pick<VariantRuns, 'traceOf' | 'successful'> & { toolsOf: (run: number) => readonly string[] },
  minRuns: number,
): number[] {
  return clusters
    .filter((cluster) => {
      const variants = testedVariants(cluster, runs, minRuns);
      if (variants.length === 1) return variants[0]!.length >= minRuns + MIN_SHAPE_RUNS;
      return variants.length >= 2 && toolsRepeatedDifferently(variants.map((members) => runs.toolsOf(members[0]!))) !== null;
    })
    .flat();
}

/**
 * Whether goals tell groups of runs apart: nearly every goal (`agreementShare`) is closer on
 * average to the other goals of its own group than to those of any other group (leave one out),
 * and that agreement beats the groups shuffled among the same goals (a permutation test seeded by
 * `seed`, so a pass is reproducible; a few goals agreeing by chance do not count, and groups too
 * small for any shuffle to be that rare never do). Goals are unit vectors, at most
 * EVIDENCE_PER_VARIANT of each group read. What a variant split and reconcile both ask: did the
 * goal decide which steps were taken?
 */
export function goalsDetermineGroups(
  groups: ReadonlyArray<readonly Float32Array[]>,
  seed: number,
  agreementShare = GOAL_DETERMINES_VARIANT,
  significance = SIGNIFICANCE,
): boolean {
  const evidence = groups.flatMap((goals) => goals.slice(0, EVIDENCE_PER_VARIANT));
  const labels = groups.flatMap((goals, group) => goals.slice(0, EVIDENCE_PER_VARIANT).map(() => group));
  if (groups.filter((goals) => goals.length > 0).length < 2) return false;
  const cosines = evidence.map((goal) => evidence.map((other) => dot(goal, other)));
  const agreement = (assigned: readonly number[]) => {
    const sizes = new Array<number>(groups.length).fill(0);
    for (const label of assigned) sizes[label]! += 1;
    let agreeing = 0;
    assigned.forEach((label, index) => {
      const sums = new Array<number>(groups.length).fill(0);
      cosines[index]!.forEach((cosine, other) => {
        if (other !== index) sums[assigned[other]!]! += cosine;
      });
      const own = sums[label]! / (sizes[label]! - 1);
      if (sums.every((sum, group) => group === label || sizes[group] === 0 || sum / sizes[group]! < own)) agreeing += 1;
    });
    return agreeing;
  };
  const observed = agreement(labels);
  if (observed < agreementShare * evidence.length) return false;
  const random = createSeededRandom(seed);
  let asHigh = 0;
  for (let permutation = 0; permutation < PERMUTATIONS; permutation++) {
    if (agreement(random.shuffle(labels)) >= observed) asHigh += 1;
  }
  return (asHigh + 1) / (PERMUTATIONS + 1) <= significance;
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
  const traced = testedVariants(cluster, runs, minRuns);
  // One procedure's steps, called with arguments of different names: its call shapes are the variants.
  const byShape = traced.length === 1 && runs.wording !== undefined;
  const variants = byShape ? shapeVariants(traced[0]!, runs.wording!, minRuns) : traced;
  if (variants.length < 2) return [[...cluster]];
  const variantOf = new Map<number, number>();
  variants.forEach((members, index) => members.forEach((run) => variantOf.set(run, index)));
  // The evidence: up to EVIDENCE_PER_VARIANT runs of each variant (the first, in cluster order).
  const byGoalVectors = goalsDetermineGroups(
    variants.map((members) => members.slice(0, EVIDENCE_PER_VARIANT).map((run) => runs.vectors[run]!)),
    cluster.length * 7919 + variants.reduce((sum, members) => sum + Math.min(members.length, EVIDENCE_PER_VARIANT), 0),
    agreementShare,
    byShape ? SHAPE_SIGNIFICANCE : SIGNIFICANCE,
  );
  if (!byGoalVectors && !(runs.wording && countsStated(variants, runs.wording, agreementShare))) return [[...cluster]];
  const parts = variants.map((members) => [...members]);
  // Split by stated counts, a successful run that repeats a step yet another number of times is a
  // variant too rare to test ("five hotels"): it stays apart rather than blur a variant's count.
  const rareCounts = new Map<number, number[]>();
  const toolSetOf = (run: number) => [...new Set(runs.wording!.calls(run).map((call) => call.tool))].sort().join('\u0000');
  for (const run of cluster) {
    if (variantOf.has(run)) continue;
    if (!byGoalVectors && runs.successful(run) && toolSetOf(run) === toolSetOf(variants[0]![0]!)) {
      rareCounts.set(runs.traceOf(run), [...(rareCounts.get(runs.traceOf(run)) ?? []), run]);
      continue;
    }
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
  return [...parts, ...rareCounts.values()].map((part) => part.sort((a, b) => a - b));
}

/**
 * Variants that call the same tools, some of them a different number of times, with each run's
 * goal stating its own variant's count of what a repeated call is about and not another's ("the
 * policies of these two hotels" vs "three hotels") — in at least `share` of every variant's runs.
 * A count no goal states (a loop over whatever a search returned) leaves the variants one procedure.
 */
function countsStated(variants: readonly number[][], wording: NonNullable<VariantRuns['wording']>, share: number): boolean {
  const toolsOf = (run: number) => wording.calls(run).map((call) => call.tool);
  const repeated = toolsRepeatedDifferently(variants.map((members) => toolsOf(members[0]!)));
  if (!repeated) return false;
  const countOf = (run: number, tool: string) => toolsOf(run).filter((called) => called === tool).length;
  const variantCounts = variants.map((members) => new Map(repeated.map((tool) => [tool, countOf(members[0]!, tool)])));
  return variants.every((members, variant) => {
    const own = variantCounts[variant]!;
    const agreeing = members.slice(0, EVIDENCE_PER_VARIANT).filter((run) => {
      const stated = new Map(
        repeated.map((tool) => {
          const argumentNames = wording.calls(run).flatMap((call) => (call.tool === tool ? call.argumentNames : []));
          return [tool, statedCounts(wording.goal(run), callSubjects(tool, argumentNames))];
        }),
      );
      // Told apart from every other variant by a count the goal states for it and not for the other.
      return variantCounts.every(
        (other, index) =>
          index === variant ||
          repeated.some(
            (tool) =>
              own.get(tool) !== other.get(tool) && stated.get(tool)!.has(own.get(tool)!) && !stated.get(tool)!.has(other.get(tool)!),
          ),
      );
    });
    return agreeing.length >= share * Math.min(members.length, EVIDENCE_PER_VARIANT);
  });
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
