import { turnTaker, type TakeTurn } from './event-loop-turns.ts';
import { nearestNeighbourChainCut, type Linkage } from './nearest-neighbour-chain.ts';
import { goalSimilarity, type MeanDistanceSums, type RunSetSums, type RunSimilarity } from './run-similarity.ts';
import {
  meansByVisitingPairs,
  sparseEdgesOf,
  sparseNearestNeighbourChainCut,
  type ClusterMeans,
  type SparseEdges,
} from './sparse-nearest-neighbour-chain.ts';
import { thresholdComponents, type EdgeList, type TauComponentsOptions } from './tau-components.ts';

export type ClusterLinkage = Linkage;

export interface ClusterRunsOptions {
  linkage: ClusterLinkage;
  /**
   * Largest threshold-graph component clustered with the dense nearest-neighbour chain (one
   * m(m−1)/2 matrix of doubles: 4,000 → 61 MiB). Larger components take the sparse chain, which
   * holds only the pairs within the cut: no component is too large to cluster.
   */
  denseComponentLimit?: number;
  /** Passed to `thresholdComponents`. */
  candidates?: TauComponentsOptions['candidates'];
  /** Hands the event loop back between components (default: after every 50 ms of clustering). */
  takeTurn?: TakeTurn;
}

export interface ClusterVectorsOptions extends ClusterRunsOptions {
  similarityTau: number;
}

export interface VectorClustering {
  /** Clusters of ≥ 2 members (indices into the input, ascending), ordered by first member. */
  clusters: number[][];
  /** Inputs left alone at the cut. */
  singletonCount: number;
  componentCount: number;
  largestComponentSize: number;
  edgeCount: number;
  comparedPairs: number;
  /** Components clustered by the sparse chain (past the dense limit). */
  sparseComponentCount: number;
  /** Wall seconds of the threshold graph (candidates, exact checks, components) and of the linkage inside components. */
  seconds: { thresholdGraph: number; linkage: number };
}

export const defaultDenseComponentLimit = 4_000;

/**
 * Which components the sparse chain takes: every one past the dense limit, and below it those
 * whose threshold graph holds under a quarter of their pairs when a forgotten pair's mean is cheap
 * (closed-form sums, or complete linkage, which never needs one) — the dense chain computes all
 * m(m−1)/2 distances, the sparse one touches the edges.
 */
function sparseComponentsOf(
  components: number[][],
  edges: EdgeList,
  count: number,
  options: { linkage: ClusterLinkage; denseComponentLimit: number; cheapMeans: boolean },
): Set<number> {
  const sparse = new Set<number>();
  if (options.linkage === 'single') return sparse;
  const componentOf = new Int32Array(count);
  components.forEach((component, index) => component.forEach((run) => (componentOf[run] = index)));
  const edgeCounts = new Float64Array(components.length);
  for (let e = 0; e < edges.count; e++) edgeCounts[componentOf[edges.from[e]!]!]!++;
  components.forEach((component, index) => {
    const m = component.length;
    if (m <= 2) return;
    if (
      m > options.denseComponentLimit ||
      ((options.cheapMeans || options.linkage === 'complete') && edgeCounts[index]! * 4 < (m * (m - 1)) / 2)
    ) {
      sparse.add(index);
    }
  });
  return sparse;
}

/** The edges inside each sparse component, one CSR over all of them (each component's slice in local indices). */
function sparseEdgesByComponent(count: number, components: number[][], sparse: Set<number>, edges: EdgeList): Map<number, SparseEdges> {
  const result = new Map<number, SparseEdges>();
  if (sparse.size === 0) return result;
  // Sparse components' members laid end to end; an edge of any other component maps to −1.
  const position = new Int32Array(count).fill(-1);
  const starts: number[] = [];
  let next = 0;
  for (const index of sparse) {
    starts.push(next);
    for (const run of components[index]!) position[run] = next++;
  }
  const all = sparseEdgesOf(next, edges, (run) => position[run]!);
  [...sparse].forEach((index, slot) => {
    const start = starts[slot]!;
    const m = components[index]!.length;
    const from = all.offsets[start]!;
    const to = all.offsets[start + m]!;
    const neighbours = all.neighbours.subarray(from, to);
    for (let k = 0; k < neighbours.length; k++) neighbours[k]! -= start;
    result.set(index, {
      offsets: Int32Array.from(all.offsets.subarray(start, start + m + 1), (offset) => offset - from),
      neighbours,
      distances: all.distances.subarray(from, to),
    });
  });
  return result;
}

/** The design's closed-form mean distances, for a component's members by local index. */
function componentSums(sums: MeanDistanceSums, component: number[]): ClusterMeans<RunSetSums> {
  return { of: (member) => sums.of(component[member]!), union: sums.union, mean: sums.mean };
}

/**
 * Clusters runs under a run similarity: components of its threshold graph first, then the
 * nearest-neighbour chain inside each component with the configured linkage. Yields exactly the
 * partition agglomerative clustering gives on the whole set (every cross-component distance
 * exceeds the cut, so no merge at or below it crosses components; proved against `ml-hclust`
 * by test/clustering). Single linkage needs no tree at all: its cut is the components themselves.
 */
export async function clusterRuns(
  vectors: Float32Array[],
  similarity: RunSimilarity,
  options: ClusterRunsOptions,
): Promise<VectorClustering> {
  const denseComponentLimit = options.denseComponentLimit ?? defaultDenseComponentLimit;
  const started = performance.now();
  const { components, edges, edgeCount, comparedPairs } = await thresholdComponents(vectors, similarity, {
    candidates: options.candidates ?? 'auto',
  });
  const largestComponentSize = components.reduce((largest, component) => Math.max(largest, component.length), 0);
  const sparse = sparseComponentsOf(components, edges, vectors.length, {
    linkage: options.linkage,
    denseComponentLimit,
    cheapMeans: similarity.meanDistanceSums !== undefined,
  });
  const sparseEdges = sparseEdgesByComponent(vectors.length, components, sparse, edges);
  const linkageStarted = performance.now();
  const clusters: number[][] = [];
  let singletonCount = 0;
  const takeTurn = options.takeTurn ?? turnTaker();
  for (const [index, component] of components.entries()) {
    if (component.length === 1) {
      singletonCount++;
      continue;
    }
    if (options.linkage === 'single' || component.length === 2) {
      clusters.push(component);
      continue;
    }
    await takeTurn();
    const distance = (a: number, b: number) => similarity.distance(component[a]!, component[b]!);
    const componentEdges = sparseEdges.get(index);
    const sums = similarity.meanDistanceSums;
    const { linkage } = options;
    const height = similarity.cutHeight;
    const parts = !componentEdges
      ? nearestNeighbourChainCut(component.length, distance, linkage, height)
      : sums
        ? sparseNearestNeighbourChainCut(component.length, componentEdges, linkage, height, componentSums(sums, component))
        : sparseNearestNeighbourChainCut(component.length, componentEdges, linkage, height, meansByVisitingPairs(distance));
    for (const part of parts) {
      if (part.length === 1) singletonCount++;
      else clusters.push(part.map((local) => component[local]!));
    }
  }
  clusters.sort((a, b) => a[0]! - b[0]!);
  return {
    clusters,
    singletonCount,
    componentCount: components.length,
    largestComponentSize,
    edgeCount,
    comparedPairs,
    sparseComponentCount: sparse.size,
    seconds: { thresholdGraph: (linkageStarted - started) / 1000, linkage: (performance.now() - linkageStarted) / 1000 },
  };
}

/** Clusters unit vectors on goal cosine alone (`clusterRuns` with the `goal` design). */
export async function clusterVectors(vectors: Float32Array[], options: ClusterVectorsOptions): Promise<VectorClustering> {
  return clusterRuns(vectors, goalSimilarity(vectors, options.similarityTau), options);
}
