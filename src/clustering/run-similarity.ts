/**
 * The similarity the clustering cuts: "the same kind of goal, done by the same kind of
 * procedure". Each design is a distance between two runs and a cut height; the threshold graph
 * (distance ≤ cut) is what the τ-components are computed on, so the decomposition stays exact for
 * whichever design is chosen.
 *
 * - `goal`: goal cosine alone, d = 1 − g, cut 1 − τ_goal (tool-blind; what skillsmith did first).
 * - `product`: d = 1 − g·t, cut 1 − τ — goal cosine scaled by tool-sequence similarity t ∈ [0, 1].
 *   A pair joins only when both are high: g·t ≥ τ needs g ≥ τ and t ≥ τ.
 * - `mix`: d = 1 − (w·g + (1 − w)·t), cut 1 − τ — a weighted mean: a strong signal can carry a weak
 *   one (paraphrases that share few words but follow one procedure), and with τ > w a pair also
 *   needs t ≥ (τ − w) / (1 − w) whatever its goals, and g ≥ (τ − (1 − w)) / w whatever its tools.
 * - `gate`: the goal distance on its own scale, (1 − g) / (1 − τ_goal), cut 1, for pairs whose
 *   procedures pass the gate t ≥ τ_tool; a pair that fails it is at least (1 − t) / (1 − τ_tool) > 1
 *   apart. A pair joins iff g ≥ τ_goal and t ≥ τ_tool. (Past the gate the goal alone orders merges:
 *   a max of both parts would make every pair whose tool part dominates tie at a few discrete
 *   values, and the cut of a dendrogram with tied merges is not unique.)
 * - `evidence`: d = 1 − (v·g + (1 − v)·t), cut 1 − τ, where t is the tool similarity weighted by
 *   each tool's rarity in the tenant (tool-rarity.ts) and the goal's share v = w / (w + (1 − w)·m̄)
 *   shrinks as the pair's procedures carry more evidence (m̄: the mean of their traces' rarity
 *   mass). Runs that follow one distinctive procedure belong together whatever their goals' words;
 *   runs that share only tools every task calls are told apart by their goals. With w the goal's
 *   weight against one fully rare tool.
 */
import { dot } from './cosine.ts';
import { goalDotOf } from './goal-dot.ts';
import { ProcedureTable, type ProcedureTrace } from './tool-sequence-similarity.ts';
import { toolRarity } from './tool-rarity.ts';

export type SimilarityDesign = 'goal' | 'product' | 'mix' | 'gate' | 'evidence';

export interface SimilaritySettings {
  design: SimilarityDesign;
  /** Goal-cosine τ: the cut of `goal`, τ_goal of `gate`. */
  goalTau: number;
  /** The cut of `product` and `mix` on their combined score. */
  clusterTau: number;
  /** τ_tool of `gate`. */
  toolTau: number;
  /** w of `mix`: the goal cosine's weight (the tool similarity has 1 − w); of `evidence`, against one fully rare tool. */
  goalWeight: number;
}

/**
 * What every edge needs, for the candidate search: the least goal cosine a pair of runs must reach
 * when their tool similarity is at most `toolBound` (an upper bound of t, e.g.
 * `toolSimilarityBound`); Infinity when no goal cosine can make such a pair an edge. Exact in real
 * arithmetic — the search leaves a margin below it for float32 products and for the rounding of
 * the exact distance. `usesTools` is false when the tool similarity takes no part (`goal`).
 */
export interface CandidateBound {
  usesTools: boolean;
  goalNeeded(toolBound: number): number;
}

/** A set of runs reduced to what the mean distance to another set needs: its size, goal sum, procedures. */
export interface RunSetSums {
  count: number;
  goalSum: Float64Array;
  /** Runs per distinct trace (index as in `ProcedureTable.traceOfRun`). */
  traces: Map<number, number>;
}

/**
 * Exact mean distance between two disjoint sets of runs without visiting their pairs, for the
 * designs whose distance is linear in the goal cosine and the tool similarity (`goal`, `mix`):
 * the mean of a·b over the pairs is (Σa)·(Σb) / (|A|·|B|), the mean of t a sum over trace pairs.
 */
export interface MeanDistanceSums {
  of(run: number): RunSetSums;
  union(a: RunSetSums, b: RunSetSums): RunSetSums;
  mean(a: RunSetSums, b: RunSetSums): number;
}

export interface RunSimilarity {
  /** Distance between runs a and b (symmetric, ≥ 0 for identical runs). */
  distance(a: number, b: number): number;
  /** Merges of height ≤ this are applied; pairs within it are the threshold graph's edges. */
  cutHeight: number;
  /** What every edge satisfies, for the candidate search. */
  candidateBound: CandidateBound;
  /** The procedure table behind the tool signal (absent for `goal`). */
  procedures?: ProcedureTable;
  /** Present when the design's mean distance between sets of runs has a closed form. */
  meanDistanceSums?: MeanDistanceSums;
}

const designs: readonly SimilarityDesign[] = ['goal', 'product', 'mix', 'gate', 'evidence'];

/**
 * A design written as the benchmarks take it: `goal:τ`, `product:τ`, `mix:τ:w` or `evidence:τ:w` (w = goal weight)
 * or `gate:τ_goal:τ_tool`. The numbers are range-checked by `runSimilarity`.
 */
export function parseSimilarityDesign(spec: string): SimilaritySettings {
  const [design, tau, third] = spec.split(':');
  if (!designs.includes(design as SimilarityDesign)) {
    throw new RangeError(`unknown similarity design "${design}" in "${spec}" (one of ${designs.join(', ')})`);
  }
  return {
    design: design as SimilarityDesign,
    goalTau: Number(tau),
    clusterTau: Number(tau),
    toolTau: Number(third),
    goalWeight: Number(third),
  };
}

function assertFraction(name: string, value: number, { below1 }: { below1: boolean }): void {
  if (!(value > 0 && (below1 ? value < 1 : value <= 1))) {
    throw new RangeError(`${name} must be in (0, ${below1 ? '1)' : '1]'}, got ${value}`);
  }
}

/** Goal cosine alone over unit vectors. */
export function goalSimilarity(vectors: Float32Array[], similarityTau: number): RunSimilarity {
  if (!(similarityTau > -1 && similarityTau <= 1)) {
    throw new RangeError(`similarityTau must be in (-1, 1], got ${similarityTau}`);
  }
  const goalDot = goalDotOf(vectors);
  return {
    // 1 − a·b: cosineDistance of cosine.ts to the last bit.
    distance: (a, b) => 1 - goalDot(a, b),
    cutHeight: 1 - similarityTau,
    candidateBound: { usesTools: false, goalNeeded: () => similarityTau },
    meanDistanceSums: linearMeanDistanceSums(vectors, 1),
  };
}

/** Sums for d = 1 − (w·g + (1 − w)·t): mean = 1 − w·(ΣA·ΣB)/(|A||B|) − (1 − w)·Σ t / (|A||B|). */
function linearMeanDistanceSums(vectors: Float32Array[], goalWeight: number, procedures?: ProcedureTable): MeanDistanceSums {
  const toolWeight = 1 - goalWeight;
  return {
    of: (run) => ({
      count: 1,
      goalSum: Float64Array.from(vectors[run]!),
      traces: new Map([[procedures ? procedures.traceOfRun[run]! : 0, 1]]),
    }),
    union: (a, b) => {
      const goalSum = Float64Array.from(a.goalSum);
      for (let k = 0; k < goalSum.length; k++) goalSum[k]! += b.goalSum[k]!;
      const traces = new Map(a.traces);
      for (const [trace, count] of b.traces) traces.set(trace, (traces.get(trace) ?? 0) + count);
      return { count: a.count + b.count, goalSum, traces };
    },
    mean: (a, b) => {
      const pairs = a.count * b.count;
      const goalMean = dot(a.goalSum, b.goalSum) / pairs;
      if (!procedures || toolWeight === 0) return 1 - goalMean;
      let toolSum = 0;
      for (const [traceA, countA] of a.traces) {
        for (const [traceB, countB] of b.traces) toolSum += countA * countB * procedures.traceSimilarity(traceA, traceB);
      }
      return 1 - (goalWeight * goalMean + toolWeight * (toolSum / pairs));
    },
  };
}

/**
 * The procedure table a design reads: for `evidence` weighted by each tool's rarity among the runs
 * (for families of `familySize` runs, the clustering's minimum occurrences), plain otherwise.
 */
export function procedureTableFor(traces: readonly ProcedureTrace[], design: SimilarityDesign, familySize: number): ProcedureTable {
  return new ProcedureTable(
    traces,
    design === 'evidence'
      ? {
          toolWeight: toolRarity(
            traces.map((trace) => trace.tools),
            familySize,
          ),
          // Two adjacent independent steps are often taken in either order by the same procedure.
          swapCredit: 1,
        }
      : {},
  );
}

/** The configured design over unit goal vectors and the runs' procedure table (`procedureTableFor`). */
export function runSimilarity(vectors: Float32Array[], procedures: ProcedureTable, settings: SimilaritySettings): RunSimilarity {
  const { design, goalTau, clusterTau, toolTau } = settings;
  if (design === 'goal') return goalSimilarity(vectors, goalTau);
  const goalDot = goalDotOf(vectors);
  if (design === 'product') {
    assertFraction('clusterTau', clusterTau, { below1: false });
    return {
      distance: (a, b) => 1 - goalDot(a, b) * procedures.similarity(a, b),
      cutHeight: 1 - clusterTau,
      // g·t ≥ τ > 0 with 0 ≤ t ≤ T needs g ≥ τ / T.
      candidateBound: { usesTools: true, goalNeeded: (toolBound) => (toolBound > 0 ? clusterTau / toolBound : Infinity) },
      procedures,
    };
  }
  if (design === 'mix') {
    assertFraction('clusterTau', clusterTau, { below1: false });
    assertFraction('goalWeight', settings.goalWeight, { below1: false });
    const goalWeight = settings.goalWeight;
    const toolWeight = 1 - goalWeight;
    return {
      distance: (a, b) => 1 - (goalWeight * goalDot(a, b) + toolWeight * procedures.similarity(a, b)),
      cutHeight: 1 - clusterTau,
      // w·g + (1 − w)·t ≥ τ with t ≤ T needs g ≥ (τ − (1 − w)·T) / w.
      candidateBound: { usesTools: toolWeight > 0, goalNeeded: (toolBound) => (clusterTau - toolWeight * toolBound) / goalWeight },
      procedures,
      meanDistanceSums: linearMeanDistanceSums(vectors, goalWeight, procedures),
    };
  }
  if (design === 'evidence') return evidenceSimilarity(goalDot, procedures, clusterTau, settings.goalWeight);
  assertFraction('goalTau', goalTau, { below1: true });
  assertFraction('toolTau', toolTau, { below1: true });
  const goalScale = 1 - goalTau;
  const toolScale = 1 - toolTau;
  return {
    distance: (a, b) => {
      const goalPart = (1 - goalDot(a, b)) / goalScale;
      const toolPart = (1 - procedures.similarity(a, b)) / toolScale;
      return toolPart <= 1 ? goalPart : Math.max(goalPart, toolPart);
    },
    cutHeight: 1,
    // An edge has g ≥ τ_goal and t ≥ τ_tool (up to the rounding of (1 − t) / (1 − τ_tool) ≤ 1).
    candidateBound: { usesTools: true, goalNeeded: (toolBound) => (toolBound >= toolTau - 1e-9 ? goalTau : Infinity) },
    procedures,
  };
}

/** The `evidence` design over a procedure table weighted by tool rarity. */
function evidenceSimilarity(
  goalDot: (a: number, b: number) => number,
  procedures: ProcedureTable,
  clusterTau: number,
  goalWeight: number,
): RunSimilarity {
  assertFraction('clusterTau', clusterTau, { below1: false });
  assertFraction('goalWeight', goalWeight, { below1: true });
  const toolWeight = 1 - goalWeight;
  const massOfRun = (run: number) => procedures.traceMass(procedures.traceOfRun[run]!);
  let largestMass = 0;
  for (let trace = 0; trace < procedures.distinctCount; trace++) largestMass = Math.max(largestMass, procedures.traceMass(trace));
  // The least goal share any pair can have: both procedures as heavy as the heaviest.
  const leastGoalShare = goalWeight / (goalWeight + toolWeight * largestMass);
  return {
    distance: (a, b) => {
      const goalShare = goalWeight / (goalWeight + (toolWeight * (massOfRun(a) + massOfRun(b))) / 2);
      return 1 - (goalShare * goalDot(a, b) + (1 - goalShare) * procedures.similarity(a, b));
    },
    cutHeight: 1 - clusterTau,
    // v·g + (1 − v)·t ≥ τ with t ≤ T needs g ≥ T + (τ − T) / v: for T < τ at least τ (v = 1),
    // for T ≥ τ at least T + (τ − T) / v_min.
    candidateBound: {
      usesTools: true,
      goalNeeded: (toolBound) => (toolBound < clusterTau ? clusterTau : toolBound + (clusterTau - toolBound) / leastGoalShare),
    },
    procedures,
  };
}
