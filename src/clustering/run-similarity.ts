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
 */
import { cosineDistance, dot } from './cosine.ts';
import type { ProcedureTable } from './tool-sequence-similarity.ts';

export type SimilarityDesign = 'goal' | 'product' | 'mix' | 'gate';

export interface SimilaritySettings {
  design: SimilarityDesign;
  /** Goal-cosine τ: the cut of `goal`, τ_goal of `gate`. */
  goalTau: number;
  /** The cut of `product` and `mix` on their combined score. */
  clusterTau: number;
  /** τ_tool of `gate`. */
  toolTau: number;
  /** w of `mix`: the goal cosine's weight (the tool similarity has 1 − w). */
  goalWeight: number;
}

export interface RunSimilarity {
  /** Distance between runs a and b (symmetric, ≥ 0 for identical runs). */
  distance(a: number, b: number): number;
  /** Merges of height ≤ this are applied; pairs within it are the threshold graph's edges. */
  cutHeight: number;
  /** No edge has a goal cosine below this: candidate pairs can be filtered on goal products alone. */
  goalFloor: number;
  /** False when no pair of these two distinct procedures can be an edge, whatever their goals. */
  proceduresCanJoin(traceA: number, traceB: number): boolean;
  /** The procedure table behind the tool signal (absent for `goal`). */
  procedures?: ProcedureTable;
}

const designs: readonly SimilarityDesign[] = ['goal', 'product', 'mix', 'gate'];

/**
 * A design written as the benchmarks take it: `goal:τ`, `product:τ`, `mix:τ:w` (w = goal weight)
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
  return {
    distance: (a, b) => cosineDistance(vectors[a]!, vectors[b]!),
    cutHeight: 1 - similarityTau,
    goalFloor: similarityTau,
    proceduresCanJoin: () => true,
  };
}

/** The configured design over unit goal vectors and the runs' procedure table. */
export function runSimilarity(vectors: Float32Array[], procedures: ProcedureTable, settings: SimilaritySettings): RunSimilarity {
  const { design, goalTau, clusterTau, toolTau } = settings;
  if (design === 'goal') return goalSimilarity(vectors, goalTau);
  if (design === 'product') {
    assertFraction('clusterTau', clusterTau, { below1: false });
    return {
      distance: (a, b) => 1 - dot(vectors[a]!, vectors[b]!) * procedures.similarity(a, b),
      cutHeight: 1 - clusterTau,
      goalFloor: clusterTau,
      // g·t ≥ τ needs t ≥ τ / g, and g of unit vectors stored in float32 can exceed 1 by ~2e-4.
      proceduresCanJoin: (traceA, traceB) => procedures.traceSimilarity(traceA, traceB) * 1.001 >= clusterTau,
      procedures,
    };
  }
  if (design === 'mix') {
    assertFraction('clusterTau', clusterTau, { below1: false });
    assertFraction('goalWeight', settings.goalWeight, { below1: false });
    const goalWeight = settings.goalWeight;
    const toolWeight = 1 - goalWeight;
    return {
      distance: (a, b) => 1 - (goalWeight * dot(vectors[a]!, vectors[b]!) + toolWeight * procedures.similarity(a, b)),
      cutHeight: 1 - clusterTau,
      // w·g + (1 − w)·1 ≥ τ; g of float32 unit vectors may exceed 1 by ~2e-4, so t gets the same slack.
      goalFloor: (clusterTau - toolWeight) / goalWeight,
      proceduresCanJoin: (traceA, traceB) => goalWeight * 1.001 + toolWeight * procedures.traceSimilarity(traceA, traceB) >= clusterTau,
      procedures,
    };
  }
  assertFraction('goalTau', goalTau, { below1: true });
  assertFraction('toolTau', toolTau, { below1: true });
  const goalScale = 1 - goalTau;
  const toolScale = 1 - toolTau;
  return {
    distance: (a, b) => {
      const goalPart = (1 - dot(vectors[a]!, vectors[b]!)) / goalScale;
      const toolPart = (1 - procedures.similarity(a, b)) / toolScale;
      return toolPart <= 1 ? goalPart : Math.max(goalPart, toolPart);
    },
    cutHeight: 1,
    goalFloor: goalTau,
    proceduresCanJoin: (traceA, traceB) => (1 - procedures.traceSimilarity(traceA, traceB)) / toolScale <= 1,
    procedures,
  };
}
