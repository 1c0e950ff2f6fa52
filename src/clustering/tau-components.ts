/**
 * The τ-graph decomposition: connected components of the graph whose edges join runs within the
 * cut height of the clustering's distance (for goal similarity alone: cosine distance
 * `1 − a·b ≤ 1 − τ`; for the procedure-aware designs see run-similarity.ts). Agglomerative clustering with single, average or complete
 * linkage cut at height `1 − τ` never merges across these components (every cross-component
 * distance exceeds the cut), so each component can be clustered alone.
 *
 * The similarity is exact — plain Float32Array dot products accumulated in double — and the
 * edge test uses the very distance value the clustering sees, so the decomposition and the
 * clustering agree to the last bit; every edge is kept with that distance (the sparse chain
 * clusters a large component from them). Small sets compare every pair in blocks; large ones take
 * candidate pairs from blocked float32 matrix products of the similarity's candidate bound
 * (onnxruntime's GEMM, see similarity-candidates.ts) with a margin far above float32 error, and
 * re-check each candidate exactly. (Triangle-inequality pivot pruning was tried and pruned almost
 * nothing on 384-d goal-like data: in high dimensions every pivot is far from most of its group.)
 */
import { dot } from './cosine.ts';
import { goalSimilarity, type RunSimilarity } from './run-similarity.ts';
import { candidateMargin, forEachCandidatePair } from './similarity-candidates.ts';

/** Inputs must be unit vectors up to this much (pgvector round trips keep ~1e-7). */
export const unitNormTolerance = 1e-4;
/** Up to this many vectors, every pair is compared directly. */
const directComparisonLimit = 1500;
/** Rows per block in the direct comparison (keeps a block of rows hot in cache). */
const blockRows = 64;

/** Threshold-graph edges, as parallel arrays (the first `count` entries are used). */
export interface EdgeList {
  count: number;
  from: Int32Array;
  to: Int32Array;
  distance: Float64Array;
}

export interface TauComponents {
  /** Each component's member indices, ascending; components ordered by their first member. */
  components: number[][];
  /** Every edge (distance ≤ the cut height), with its exact distance. */
  edges: EdgeList;
  edgeCount: number;
  /** Pairs whose exact distance was computed (candidates of the matrix products, or every pair). */
  comparedPairs: number;
}

function growableEdges(): EdgeList & { push(from: number, to: number, distance: number): void } {
  const edges = {
    count: 0,
    from: new Int32Array(1024),
    to: new Int32Array(1024),
    distance: new Float64Array(1024),
    push(from: number, to: number, distance: number) {
      if (edges.count === edges.from.length) {
        const capacity = edges.count * 2;
        const grow = <T extends Int32Array | Float64Array>(array: T, make: (size: number) => T): T => {
          const grown = make(capacity);
          grown.set(array);
          return grown;
        };
        edges.from = grow(edges.from, (size) => new Int32Array(size));
        edges.to = grow(edges.to, (size) => new Int32Array(size));
        edges.distance = grow(edges.distance, (size) => new Float64Array(size));
      }
      edges.from[edges.count] = from;
      edges.to[edges.count] = to;
      edges.distance[edges.count] = distance;
      edges.count++;
    },
  };
  return edges;
}

class UnionFind {
  private readonly parent: Int32Array;
  private readonly rank: Uint8Array;
  constructor(size: number) {
    this.parent = new Int32Array(size);
    this.rank = new Uint8Array(size);
    for (let i = 0; i < size; i++) this.parent[i] = i;
  }
  find(x: number): number {
    let root = x;
    while (this.parent[root] !== root) root = this.parent[root]!;
    while (this.parent[x] !== root) {
      const next = this.parent[x]!;
      this.parent[x] = root;
      x = next;
    }
    return root;
  }
  union(a: number, b: number): void {
    const rootA = this.find(a);
    const rootB = this.find(b);
    if (rootA === rootB) return;
    const rankA = this.rank[rootA]!;
    const rankB = this.rank[rootB]!;
    if (rankA < rankB) this.parent[rootA] = rootB;
    else if (rankA > rankB) this.parent[rootB] = rootA;
    else {
      this.parent[rootB] = rootA;
      this.rank[rootA] = rankA + 1;
    }
  }
}

function assertUnitVectors(vectors: Float32Array[]): void {
  const dimension = vectors[0]?.length ?? 0;
  vectors.forEach((vector, index) => {
    if (vector.length !== dimension) {
      throw new RangeError(`vector ${index} has dimension ${vector.length}, expected ${dimension}`);
    }
    const norm = Math.sqrt(dot(vector, vector));
    if (!(Math.abs(norm - 1) <= unitNormTolerance)) {
      throw new RangeError(`vector ${index} is not L2-normalised (norm ${norm})`);
    }
  });
}

/**
 * Connected components of the graph "cosine distance ≤ 1 − τ" over unit vectors.
 */
export interface TauComponentsOptions {
  /**
   * Where candidate pairs come from: `all-pairs` (every pair, in JS), `matrix-product`
   * (float32 GEMM filter, then the exact check), or `auto` (all pairs up to 1,500 vectors).
   */
  candidates?: 'auto' | 'all-pairs' | 'matrix-product';
}

export async function tauComponents(
  vectors: Float32Array[],
  similarityTau: number,
  options: TauComponentsOptions = {},
): Promise<TauComponents> {
  return thresholdComponents(vectors, goalSimilarity(vectors, similarityTau), options);
}

/**
 * Runs ordered so that alike procedures sit together (the candidate search's column blocks then
 * have tight tool maxima): by their procedure's tools, most used tools first, then by procedure.
 */
function procedureOrder(count: number, similarity: RunSimilarity): number[] {
  const order = Array.from({ length: count }, (_, index) => index);
  const procedures = similarity.procedures;
  if (!procedures || !similarity.candidateBound.usesTools) return order;
  const use = new Float64Array(procedures.toolDimension);
  for (let run = 0; run < count; run++) for (const axis of procedures.toolVector(procedures.traceOfRun[run]!).axes) use[axis]!++;
  const keys = Array.from({ length: procedures.distinctCount }, (_, trace) =>
    [...procedures.toolVector(trace).axes].sort((a, b) => use[b]! - use[a]! || a - b),
  );
  const compareTraces = (a: number, b: number): number => {
    const keyA = keys[a]!;
    const keyB = keys[b]!;
    for (let k = 0; k < Math.min(keyA.length, keyB.length); k++) if (keyA[k] !== keyB[k]) return keyA[k]! - keyB[k]!;
    return keyA.length - keyB.length || a - b;
  };
  const traceOfRun = procedures.traceOfRun;
  return order.sort((a, b) => compareTraces(traceOfRun[a]!, traceOfRun[b]!) || a - b);
}

/**
 * Connected components of a run similarity's threshold graph (distance ≤ its cut height), with
 * every edge. Candidates come from the similarity's candidate bound in matrix products; each
 * candidate is decided by the exact distance the clustering uses.
 */
export async function thresholdComponents(
  vectors: Float32Array[],
  similarity: RunSimilarity,
  options: TauComponentsOptions = {},
): Promise<TauComponents> {
  assertUnitVectors(vectors);
  const n = vectors.length;
  const height = similarity.cutHeight;
  const unionFind = new UnionFind(n);
  const edges = growableEdges();
  let comparedPairs = 0;

  const link = (i: number, j: number): void => {
    comparedPairs++;
    const distance = similarity.distance(i, j);
    if (distance <= height) {
      edges.push(i, j, distance);
      unionFind.union(i, j);
    }
  };

  const candidates = options.candidates ?? 'auto';
  const allPairs = candidates === 'all-pairs' || (candidates === 'auto' && n <= directComparisonLimit);
  if (allPairs) {
    for (let blockStart = 0; blockStart < n; blockStart += blockRows) {
      const blockEnd = Math.min(n, blockStart + blockRows);
      for (let j = blockStart; j < n; j++) {
        const rowEnd = Math.min(blockEnd, j);
        for (let i = blockStart; i < rowEnd; i++) link(i, j);
      }
    }
  } else {
    const order = procedureOrder(n, similarity);
    const procedures = similarity.procedures;
    const bound = similarity.candidateBound;
    await forEachCandidatePair(
      {
        goals: order.map((run) => vectors[run]!),
        tools: procedures && {
          procedureOfPoint: Int32Array.from(order, (run) => procedures.traceOfRun[run]!),
          procedures: Array.from({ length: procedures.distinctCount }, (_, trace) => procedures.toolVector(trace)),
          dimension: procedures.toolDimension,
        },
        bound,
      },
      (i, j, goalCosine) => {
        const a = order[i]!;
        const b = order[j]!;
        // The goal cosine this pair's own tool similarity needs (the product's row only knew its block's most).
        const toolBound = procedures && bound.usesTools ? procedures.similarity(a, b) : 1;
        if (goalCosine >= bound.goalNeeded(toolBound) - candidateMargin) link(a, b);
      },
    );
  }

  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = unionFind.find(i);
    const members = byRoot.get(root);
    if (members) members.push(i);
    else byRoot.set(root, [i]);
  }
  const components = [...byRoot.values()].sort((a, b) => a[0]! - b[0]!);
  return { components, edges, edgeCount: edges.count, comparedPairs };
}
