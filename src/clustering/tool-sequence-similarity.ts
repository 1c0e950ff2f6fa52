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

// Two rows of the LCS table, reused by every call (a pass compares up to millions of pairs).
let previousRow = new Uint16Array(64);
let currentRow = new Uint16Array(64);

/** Length of the longest common subsequence of two token sequences, in O(|a|·|b|) time and O(|b|) space. */
export function longestCommonSubsequence(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length === 0 || b.length === 0) return 0;
  if (previousRow.length <= b.length) {
    previousRow = new Uint16Array(2 * (b.length + 1));
    currentRow = new Uint16Array(2 * (b.length + 1));
  }
  let previous = previousRow.fill(0, 0, b.length + 1);
  let current = currentRow.fill(0, 0, b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const token = a[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      current[j] = token === b[j - 1]! ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

function similarityOfTokens(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const total = a.length + b.length;
  return total === 0 ? 1 : (2 * longestCommonSubsequence(a, b)) / total;
}

/**
 * A trace's tools as a bag: a non-negative unit vector over `ProcedureTable.toolDimension` axes by
 * its non-zero entries (`values`, u[tool] = √(count / length)), the counts behind it and the length.
 */
export interface SparseToolVector {
  /** Ascending. */
  axes: Int32Array;
  values: Float64Array;
  /** How often each axis's tool occurs in the trace (the empty trace: 0 on its own axis). */
  counts: Int32Array;
  /** Calls in the trace. */
  length: number;
}

function toolVectorOf(tokens: Int32Array, emptyAxis: number): SparseToolVector {
  if (tokens.length === 0) return { axes: Int32Array.of(emptyAxis), values: Float64Array.of(1), counts: Int32Array.of(0), length: 0 };
  const counts = new Map<number, number>();
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  const axes = Int32Array.from([...counts.keys()].sort((a, b) => a - b));
  return {
    axes,
    values: Float64Array.from(axes, (axis) => Math.sqrt(counts.get(axis)! / tokens.length)),
    counts: Int32Array.from(axes, (axis) => counts.get(axis)!),
    length: tokens.length,
  };
}

/**
 * An upper bound of the similarity of two traces from their bags of tools alone: a common
 * subsequence matches each tool at most min(count_a, count_b) times, so
 * t = 2·LCS / (|a| + |b|) ≤ 2·Σ min(count_a, count_b) / (|a| + |b|) — tighter than the tool vectors'
 * inner product (√(count_a·count_b) ≥ min, and the arithmetic mean of the lengths ≥ their geometric
 * mean), and with the same integer arithmetic as t, so t never exceeds it by a rounding.
 */
export function toolSimilarityBound(a: SparseToolVector, b: SparseToolVector): number {
  const total = a.length + b.length;
  if (total === 0) return 1;
  let common = 0;
  let i = 0;
  let j = 0;
  while (i < a.axes.length && j < b.axes.length) {
    const axisA = a.axes[i]!;
    const axisB = b.axes[j]!;
    if (axisA === axisB) common += Math.min(a.counts[i++]!, b.counts[j++]!);
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

  constructor(traces: readonly ProcedureTrace[]) {
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
    this.toolVectors = this.distinct.map((tokens) => toolVectorOf(tokens, toolIds.size));
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
    return similarityOfTokens(this.distinct[traceA]!, this.distinct[traceB]!);
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

  /** The tool-sequence similarity of runs `a` and `b`, in [0, 1]; symmetric. */
  similarity(a: number, b: number): number {
    return this.traceSimilarity(this.traceOfRun[a]!, this.traceOfRun[b]!);
  }
}

/** The tool-sequence similarity of two traces (what `ProcedureTable` tabulates). */
export function toolSequenceSimilarity(a: ProcedureTrace, b: ProcedureTrace): number {
  return new ProcedureTable([a, b]).similarity(0, 1);
}
