import { agnes } from 'ml-hclust';
import type { ClusterLinkage } from '../../src/clustering/cluster-goals.ts';
import type { RunSimilarity } from '../../src/clustering/run-similarity.ts';

/**
 * The reference the clustering is proved against: `ml-hclust` `agnes` (the textbook O(n³)
 * greedy algorithm) on the whole set's distance matrix under the same run similarity, cut at the
 * same height (its `cut(h)` keeps a node when `h >= node.height`). Returns every part, singletons
 * included, as indices into the input.
 */
export function wholeSetPartition(count: number, similarity: RunSimilarity, linkage: ClusterLinkage): number[][] {
  if (count === 1) return [[0]];
  const matrix: number[][] = Array.from({ length: count }, () => new Array<number>(count).fill(0));
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < i; j++) {
      const distance = similarity.distance(i, j);
      matrix[i]![j] = distance;
      matrix[j]![i] = distance;
    }
  }
  const tree = agnes(matrix, { method: linkage, isDistanceMatrix: true });
  return tree.cut(similarity.cutHeight).map((node) => node.indices().sort((a, b) => a - b));
}
