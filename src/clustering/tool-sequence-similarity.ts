/**
 * How alike two runs' procedures are, from the tools of their successful calls in order.
 *
 * The similarity is the longest common subsequence (LCS) of the two tool sequences, normalised
 * Dice-style: 2·LCS / (|a| + |b|). An optional step present in one run only costs one unit of
 * LCS against a length of the procedure, so a 5-step procedure with and without its optional
 * step scores 10/11 ≈ 0.91, while bigram overlap would lose two bigrams and score 0.5. A retried
 * call leaves one successful call behind (the failed attempt is not part of the sequence), so a
 * retry does not move the similarity at all; two consecutive successful calls of one tool are kept
 * as two steps (looking up an origin and then a destination is not a retry).
 *
 * A run that failed part-way is compared the same way: the further it got, the more evidence of
 * the procedure it was attempting (3 of 5 steps: 0.75). A run with no successful call carries no
 * evidence and is 0 to every run with some. (Containment — LCS / the shorter length — was tried
 * for such runs and rejected: a one-call prefix is contained in every procedure that starts
 * alike, so failed runs bridged families into threshold-graph components of thousands.)
 */

export interface ProcedureTrace {
  /** Tools of the run's successful calls, in call order. */
  tools: readonly string[];
}

/** A run's procedure trace from its calls: the tools of the successful ones, in call order. */
export function traceOfRun(run: { toolCalls: readonly { tool: string; success: boolean }[] }): ProcedureTrace {
  return { tools: run.toolCalls.filter((call) => call.success).map((call) => call.tool) };
}

// Three rows of the LCS table, reused by every call (a pass compares up to millions of pairs).
let beforePreviousRow = new Float64Array(64);
let previousRow = new Float64Array(64);
let currentRow = new Float64Array(64);

/**
 * The weight of the heaviest common subsequence of two token sequences (each token weighs
 * `weights[token]`, 1 when no weights are given), in O(|a|·|b|) time and O(|b|) space. With a
 * `swapCredit` > 0, two adjacent tokens taken in the other order also match, for that share of
 * their weight (each token still matches at most once, so the bag bound still holds).
 */
export function heaviestCommonSubsequence(a: ArrayLike<number>, b: ArrayLike<number>, weights?: Float64Array, swapCredit = 0): number {
  if (a.length === 0 || b.length === 0) return 0;
  if (previousRow.length <= b.length) {
    beforePreviousRow = new Float64Array(2 * (b.length + 1));
    previousRow = new Float64Array(2 * (b.length + 1));
    currentRow = new Float64Array(2 * (b.length + 1));
  }
  let beforePrevious = beforePreviousRow.fill(0, 0, b.length + 1);
  let previous = previousRow.fill(0, 0, b.length + 1);
  let current = currentRow.fill(0, 0, b.length + 1);
  const weightOf = (token: number) => (weights ? weights[token]! : 1);
  for (let i = 1; i <= a.length; i++) {
    const token = a[i - 1]!;
    const weight = weightOf(token);
    for (let j = 1; j <= b.length; j++) {
      let best = token === b[j - 1]! ? previous[j - 1]! + weight : Math.max(previous[j]!, current[j - 1]!);
      if (swapCredit > 0 && i > 1 && j > 1 && token === b[j - 2]! && a[i - 2]! === b[j - 1]! && token !== a[i - 2]!) {
        best = Math.max(best, beforePrevious[j - 2]! + swapCredit * (weight + weightOf(a[i - 2]!)));
      }
      current[j] = best;
    }
    [beforePrevious, previous, current] = [previous, current, beforePrevious];
  }
  return previous[b.length]!;
}

/** Length of the longest common subsequence of two token sequences. */
export function longestCommonSubsequence(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return heaviestCommonSubsequence(a, b);
}

const massOf = (tokens: ArrayLike<number>, weights: Float64Array | undefined): number => {
  if (!weights) return tokens.length;
  let mass = 0;
  for (let k = 0; k < tokens.length; k++) mass += weights[tokens[k]!]!;
  return mass;
};

function similarityOfTokens(a: ArrayLike<number>, b: ArrayLike<number>, weights?: Float64Array, swapCredit = 0): number {
  const total = massOf(a, weights) + massOf(b, weights);
  return total === 0 ? 1 : (2 * heaviestCommonSubsequence(a, b, weights, swapCredit)) / total;
}

/**
 * A trace's tools as a bag: a non-negative unit vector over `ProcedureTable.toolDimension` axes by
 * its non-zero entries (`values`, u[tool] = √(weight · count / mass)), the counts and weights behind
 * it, and its mass (Σ weight · count: its length when every tool weighs 1).
 */
export interface SparseToolVector {
  /** Ascending. */
  axes: Int32Array;
  values: Float64Array;
  /** How often each axis's tool occurs in the trace (the empty trace: 0 on its own axis). */
  counts: Int32Array;
  /** Each axis's tool weight. */
  weights: Float64Array;
  /** Σ weight · count over the trace's calls. */
  mass: number;
}

function toolVectorOf(tokens: Int32Array, emptyAxis: number, weights: Float64Array | undefined): SparseToolVector {
  if (tokens.length === 0) {
    return { axes: Int32Array.of(emptyAxis), values: Float64Array.of(1), counts: Int32Array.of(0), weights: Float64Array.of(1), mass: 0 };
  }
  const counts = new Map<number, number>();
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  const axes = Int32Array.from([...counts.keys()].sort((a, b) => a - b));
  const axisWeights = Float64Array.from(axes, (axis) => (weights ? weights[axis]! : 1));
  const mass = massOf(tokens, weights);
  return {
    axes,
    values: Float64Array.from(axes, (axis, index) => Math.sqrt((axisWeights[index]! * counts.get(axis)!) / mass)),
    counts: Int32Array.from(axes, (axis) => counts.get(axis)!),
    weights: axisWeights,
    mass,
  };
}

/**
 * An upper bound of the similarity of two traces from their bags of tools alone: a common
 * subsequence matches each tool at most min(count_a, count_b) times, so
 * t = 2·W(LCS) / (mass_a + mass_b) ≤ 2·Σ weight·min(count_a, count_b) / (mass_a + mass_b) — tighter
 * than the tool vectors' inner product (√(count_a·count_b) ≥ min, and the arithmetic mean of the
 * masses ≥ their geometric mean), and with the same arithmetic as t for unit weights, so t never
 * exceeds it by a rounding.
 */
export function toolSimilarityBound(a: SparseToolVector, b: SparseToolVector): number {
  const total = a.mass + b.mass;
  if (total === 0) return 1;
  let common = 0;
  let i = 0;
  let j = 0;
  while (i < a.axes.length && j < b.axes.length) {
    const axisA = a.axes[i]!;
    const axisB = b.axes[j]!;
    if (axisA === axisB) common += a.weights[i]! * Math.min(a.counts[i++]!, b.counts[j++]!);
    else if (axisA < axisB) i++;
    else j++;
  }
  return (2 * common) / total;
}

/** Up to this many distinct traces the pairwise similarities are tabulated (4,096² doubles = 128 MiB). */
const tabulatedTraceLimit = 4096;

/**
 * The distinct procedure traces of a set of runs and their pairwise similarities: real traces
 * repeat a few hundred procedures across thousands of runs, so the similarities are computed once
 * per pair of distinct traces and every pair of runs is a table lookup. Past `tabulatedTraceLimit`
 * distinct traces a pair is computed when asked (the same function, so the same value).
 */
export class ProcedureTable {
  /** For each run, the index of its distinct trace. */
  readonly traceOfRun: Int32Array;
  readonly distinctCount: number;
  /** Axes of `toolVector`: one per distinct tool, and a last one for the empty trace. */
  readonly toolDimension: number;
  private readonly distinct: Int32Array[] = [];
  private readonly table: Float64Array | undefined;
  /** Past `tabulatedTraceLimit`, the pairs computed so far (a pass asks for the same pairs again). */
  private readonly computed = new Map<number, number>();
  private lastKey = -1;
  private lastValue = 0;
  private readonly toolVectors: SparseToolVector[];

  /** Each tool's weight by token id (absent: every tool weighs 1). */
  private readonly weights: Float64Array | undefined;
  /** The share of their weight two adjacent steps taken in the other order count for (`swapCredit`). */
  private readonly swapCredit: number;

  /**
   * `toolWeight` makes the similarity weighted: a common subsequence is worth the weights of the
   * tools it matches, a trace the weights of its calls (e.g. a tool's rarity across the tenant, so
   * sharing a tool every task calls says less than sharing one only this task calls). Weights > 0.
   *
   * `swapCredit` (0 to 1, default 0) lets two adjacent steps taken in the other order match for that
   * share of their weight: two steps that do not depend on each other (open a session, look the
   * record up) are taken in either order by one procedure, and the plain subsequence counts such a
   * swap as a missing step. Steps moved further than a neighbour still count as missing.
   */
  constructor(traces: readonly ProcedureTrace[], options: { toolWeight?: (tool: string) => number; swapCredit?: number } = {}) {
    this.swapCredit = options.swapCredit ?? 0;
    const toolIds = new Map<string, number>();
    const traceIds = new Map<string, number>();
    this.traceOfRun = new Int32Array(traces.length);
    traces.forEach((trace, run) => {
      const tokens = Int32Array.from(trace.tools, (tool) => {
        let id = toolIds.get(tool);
        if (id === undefined) toolIds.set(tool, (id = toolIds.size));
        return id;
      });
      const key = tokens.join(',');
      let id = traceIds.get(key);
      if (id === undefined) {
        traceIds.set(key, (id = this.distinct.length));
        this.distinct.push(tokens);
      }
      this.traceOfRun[run] = id;
    });
    const count = this.distinct.length;
    this.distinctCount = count;
    this.toolDimension = toolIds.size + 1;
    const toolWeight = options.toolWeight;
    if (toolWeight) {
      this.weights = new Float64Array(toolIds.size);
      for (const [tool, id] of toolIds) {
        const weight = toolWeight(tool);
        if (!(weight > 0)) throw new RangeError(`tool weight of ${tool} must be > 0, got ${weight}`);
        this.weights[id] = weight;
      }
    }
    this.toolVectors = this.distinct.map((tokens) => toolVectorOf(tokens, toolIds.size, this.weights));
    if (count <= tabulatedTraceLimit) {
      const table = new Float64Array(count * count);
      for (let i = 0; i < count; i++) {
        table[i * count + i] = 1;
        for (let j = 0; j < i; j++) {
          const value = this.computeSimilarity(i, j);
          table[i * count + j] = value;
          table[j * count + i] = value;
        }
      }
      this.table = table;
    }
  }

  private computeSimilarity(traceA: number, traceB: number): number {
    return similarityOfTokens(this.distinct[traceA]!, this.distinct[traceB]!, this.weights, this.swapCredit);
  }

  /** The similarity of two distinct traces (indices as in `traceOfRun`), in [0, 1]; symmetric. */
  traceSimilarity(traceA: number, traceB: number): number {
    if (this.table) return this.table[traceA * this.distinctCount + traceB]!;
    if (traceA === traceB) return 1;
    const key = Math.min(traceA, traceB) * this.distinctCount + Math.max(traceA, traceB);
    // Candidates arrive run by run against blocks of runs sorted by procedure: mostly the last pair again.
    if (key === this.lastKey) return this.lastValue;
    let value = this.computed.get(key);
    if (value === undefined) this.computed.set(key, (value = this.computeSimilarity(Math.min(traceA, traceB), Math.max(traceA, traceB))));
    this.lastKey = key;
    this.lastValue = value;
    return value;
  }

  /**
   * A unit vector per distinct trace whose inner products bound the similarity from above:
   * t(a, b) ≤ u_a · u_b with u_a[tool] = √(count_a(tool) / |a|), because LCS ≤ Σ min(count_a, count_b)
   * ≤ Σ √(count_a · count_b) and 2 / (|a| + |b|) ≤ 1 / √(|a|·|b|). The empty trace (similarity 1 to
   * itself, 0 to any other) is its own axis. Candidate searches carry the tool signal this way.
   */
  toolVector(trace: number): SparseToolVector {
    return this.toolVectors[trace]!;
  }

  /** A distinct trace's mass: Σ weight over its calls (its length when unweighted). */
  traceMass(trace: number): number {
    return this.toolVectors[trace]!.mass;
  }

  /** The tool-sequence similarity of runs `a` and `b`, in [0, 1]; symmetric. */
  similarity(a: number, b: number): number {
    return this.traceSimilarity(this.traceOfRun[a]!, this.traceOfRun[b]!);
  }
}

/** The tool-sequence similarity of two traces (what `ProcedureTable` tabulates). */
export function toolSequenceSimilarity(a: ProcedureTrace, b: ProcedureTrace): number {
  return new ProcedureTable([a, b]).similarity(0, 1);
}
