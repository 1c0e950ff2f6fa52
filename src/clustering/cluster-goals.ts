import { condensedMatrixBytes, nearestNeighbourChainCut, type Linkage } from './nearest-neighbour-chain.ts';
import { goalSimilarity, type RunSimilarity } from './run-similarity.ts';
import { thresholdComponents, type TauComponentsOptions } from './tau-components.ts';
import { SkillsmithError } from '../skillsmith-error.ts';

export type ClusterLinkage = Linkage;

export interface ClusterRunsOptions {
  linkage: ClusterLinkage;
  /**
   * Largest threshold-graph component clustered with average or complete linkage: the
   * nearest-neighbour chain holds one m(m−1)/2 matrix of doubles (15,000 → 900 MB). A larger
   * one fails loudly with `ClusterComponentTooLarge` rather than exhaust memory mid-pass.
   */
  maxComponentSize?: number;
  /** Passed to `thresholdComponents`. */
  candidates?: TauComponentsOptions['candidates'];
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
}

export const defaultMaxComponentSize = 15_000;

export class ClusterComponentTooLarge extends SkillsmithError {
  static override readonly code = 'ClusterComponentTooLarge';
  static override readonly retryable = false;
  constructor(
    readonly componentSize: number,
    readonly maxComponentSize: number,
  ) {
    super(
      `a threshold-graph component of ${componentSize} runs exceeds the ${maxComponentSize} that agglomerative ` +
        `clustering handles per component (its distance matrix would take ${Math.round(condensedMatrixBytes(componentSize) / 2 ** 20)} MiB); ` +
        'raise SKILLSMITH_SIMILARITY_TAU, use a procedure-aware SKILLSMITH_CLUSTER_SIMILARITY, or use single linkage',
    );
  }
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
  const maxComponentSize = options.maxComponentSize ?? defaultMaxComponentSize;
  const { components, edgeCount, comparedPairs } = await thresholdComponents(vectors, similarity, {
    candidates: options.candidates ?? 'auto',
  });
  const largestComponentSize = components.reduce((largest, component) => Math.max(largest, component.length), 0);
  if (options.linkage !== 'single' && largestComponentSize > maxComponentSize) {
    throw new ClusterComponentTooLarge(largestComponentSize, maxComponentSize);
  }
  const clusters: number[][] = [];
  let singletonCount = 0;
  for (const component of components) {
    if (component.length === 1) {
      singletonCount++;
      continue;
    }
    if (options.linkage === 'single' || component.length === 2) {
      clusters.push(component);
      continue;
    }
    const parts = nearestNeighbourChainCut(
      component.length,
      (a, b) => similarity.distance(component[a]!, component[b]!),
      options.linkage,
      similarity.cutHeight,
    );
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
  };
}

/** Clusters unit vectors on goal cosine alone (`clusterRuns` with the `goal` design). */
export async function clusterVectors(vectors: Float32Array[], options: ClusterVectorsOptions): Promise<VectorClustering> {
  return clusterRuns(vectors, goalSimilarity(vectors, options.similarityTau), options);
}
