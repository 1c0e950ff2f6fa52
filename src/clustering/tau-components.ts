/**
 * The τ-graph decomposition: connected components of the graph whose edges join vectors with
 * cosine distance `1 − a·b ≤ 1 − τ`. Agglomerative clustering with single, average or complete
 * linkage cut at height `1 − τ` never merges across these components (every cross-component
 * distance exceeds the cut), so each component can be clustered alone.
 *
 * The similarity is exact — plain Float32Array dot products accumulated in double — and the
 * edge test uses the very `cosineDistance` value the clustering sees, so the decomposition and
 * the clustering agree to the last bit. Small sets compare every pair in blocks; large ones take
 * candidate pairs from blocked float32 matrix products (onnxruntime's GEMM, see
 * similarity-candidates.ts) with a margin far above float32 error, and re-check each candidate
 * exactly. (Triangle-inequality pivot pruning was tried and pruned almost nothing on 384-d
 * goal-like data: in high dimensions every pivot is far from most of its group.)
 */
import { candidateMargin, forEachCandidatePair } from './similarity-candidates.ts';


/** Inputs must be unit vectors up to this much (pgvector round trips keep ~1e-7). */
export const unitNormTolerance = 1e-4;
/** Up to this many vectors, every pair is compared directly. */
const directComparisonLimit = 1500;
/** Rows per block in the direct comparison (keeps a block of rows hot in cache). */
const blockRows = 64;

/** Dot product accumulated in double, in a fixed order (symmetric: dot(a, b) === dot(b, a)). */
export function dot(a: Float32Array, b: Float32Array): number {
  const length = a.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 3 < length; k += 4) {
    s0 += a[k]! * b[k]!;
    s1 += a[k + 1]! * b[k + 1]!;
    s2 += a[k + 2]! * b[k + 2]!;
    s3 += a[k + 3]! * b[k + 3]!;
  }
  for (; k < length; k++) s0 += a[k]! * b[k]!;
  return s0 + s1 + (s2 + s3);
}

/** The cosine distance of two unit vectors, exactly as the clustering uses it. */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  return 1 - dot(a, b);
}

/** The cut height that corresponds to a similarity threshold τ. */
export function cutHeight(similarityTau: number): number {
  return 1 - similarityTau;
}

export interface TauComponents {
  /** Each component's member indices, ascending; components ordered by their first member. */
  components: number[][];
  /** Edges found (pairs already known to share a component are not compared, so not counted). */
  edgeCount: number;
  /** Pairs whose exact distance was computed (candidates not already known to be connected). */
  comparedPairs: number;
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
  if (!(similarityTau > -1 && similarityTau <= 1)) {
    throw new RangeError(`similarityTau must be in (-1, 1], got ${similarityTau}`);
  }
  assertUnitVectors(vectors);
  const n = vectors.length;
  const height = cutHeight(similarityTau);
  const unionFind = new UnionFind(n);
  let edgeCount = 0;
  let comparedPairs = 0;

  const link = (i: number, j: number): void => {
    // Only connectivity matters: a pair already in one component needs no distance.
    if (unionFind.find(i) === unionFind.find(j)) return;
    comparedPairs++;
    if (cosineDistance(vectors[i]!, vectors[j]!) <= height) {
      edgeCount++;
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
    await forEachCandidatePair(vectors, 1 - height - candidateMargin, link);
  }

  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = unionFind.find(i);
    const members = byRoot.get(root);
    if (members) members.push(i);
    else byRoot.set(root, [i]);
  }
  const components = [...byRoot.values()].sort((a, b) => a[0]! - b[0]!);
  return { components, edgeCount, comparedPairs };
}
