/**
 * The τ-graph decomposition: connected components of the graph whose edges join runs within the
 * cut height of the clustering's distance (for goal similarity alone: cosine distance
 * `1 − a·b ≤ 1 − τ`; for the procedure-aware designs see run-similarity.ts). Agglomerative clustering with single, average or complete
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
import { dot } from './cosine.ts';
import { goalSimilarity, type RunSimilarity } from './run-similarity.ts';
import { candidateMargin, forEachCandidatePair } from './similarity-candidates.ts';

/** Inputs must be unit vectors up to this much (pgvector round trips keep ~1e-7). */
export const unitNormTolerance = 1e-4;
/** Up to this many vectors, every pair is compared directly. */
const directComparisonLimit = 1500;
/** Rows per block in the direct comparison (keeps a block of rows hot in cache). */
const blockRows = 64;

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
  return thresholdComponents(vectors, goalSimilarity(vectors, similarityTau), options);
}

/**
 * Groups of runs whose procedures could join at all: connected components of the distinct
 * procedures under `proceduresCanJoin`. No edge crosses two groups, so each is searched alone.
 */
function procedureGroups(count: number, similarity: RunSimilarity): number[][] {
  const procedures = similarity.procedures;
  if (!procedures) return [Array.from({ length: count }, (_, index) => index)];
  const distinct = procedures.distinctCount;
  const traces = new UnionFind(distinct);
  for (let a = 0; a < distinct; a++) {
    for (let b = 0; b < a; b++) if (similarity.proceduresCanJoin(a, b)) traces.union(a, b);
  }
  const byRoot = new Map<number, number[]>();
  for (let run = 0; run < count; run++) {
    const root = traces.find(procedures.traceOfRun[run]!);
    const members = byRoot.get(root);
    if (members) members.push(run);
    else byRoot.set(root, [run]);
  }
  return [...byRoot.values()];
}

/**
 * Connected components of a run similarity's threshold graph (distance ≤ its cut height).
 * Candidates come from goal products at the similarity's goal floor, within groups of runs whose
 * procedures can join; each candidate is decided by the exact distance the clustering uses.
 */
export async function thresholdComponents(
  vectors: Float32Array[],
  similarity: RunSimilarity,
  options: TauComponentsOptions = {},
): Promise<TauComponents> {
  assertUnitVectors(vectors);
  const n = vectors.length;
  const height = similarity.cutHeight;
  const traceOfRun = similarity.procedures?.traceOfRun;
  const unionFind = new UnionFind(n);
  let edgeCount = 0;
  let comparedPairs = 0;

  const link = (i: number, j: number): void => {
    // Only connectivity matters: a pair already in one component needs no distance.
    if (unionFind.find(i) === unionFind.find(j)) return;
    if (traceOfRun && !similarity.proceduresCanJoin(traceOfRun[i]!, traceOfRun[j]!)) return;
    comparedPairs++;
    if (similarity.distance(i, j) <= height) {
      edgeCount++;
      unionFind.union(i, j);
    }
  };

  const candidates = options.candidates ?? 'auto';
  for (const group of procedureGroups(n, similarity)) {
    const size = group.length;
    const allPairs = candidates === 'all-pairs' || (candidates === 'auto' && size <= directComparisonLimit);
    if (allPairs) {
      for (let blockStart = 0; blockStart < size; blockStart += blockRows) {
        const blockEnd = Math.min(size, blockStart + blockRows);
        for (let j = blockStart; j < size; j++) {
          const rowEnd = Math.min(blockEnd, j);
          for (let i = blockStart; i < rowEnd; i++) link(group[i]!, group[j]!);
        }
      }
    } else {
      const groupVectors = group.map((run) => vectors[run]!);
      await forEachCandidatePair(groupVectors, similarity.goalFloor - candidateMargin, (i, j) => link(group[i]!, group[j]!));
    }
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
