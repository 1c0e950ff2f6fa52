/**
 * Agglomerative clustering cut at a height, by the nearest-neighbour-chain algorithm: O(m²) time
 * and one condensed distance matrix (m(m−1)/2 doubles) where the textbook greedy algorithm
 * (`ml-hclust` `agnes`) takes O(m³). Single, complete and average linkage are reducible — merging
 * two clusters never brings a third closer than it was to one of them — so the dendrogram the
 * chain builds by merging reciprocal nearest neighbours is the greedy one, and the cut at `h`
 * (every merge of height ≤ h applied, as `agnes(...).cut(h)`) is the same partition. Cluster
 * distances follow the Lance–Williams updates in the arithmetic `agnes` uses.
 *
 * Reducibility also lets the cut prune: a cluster whose nearest neighbour is farther than `h`
 * can never merge below `h`, so it is finished and leaves the search. (A component too large for
 * the matrix takes sparse-nearest-neighbour-chain.ts, which keeps only the pairs within `h`.)
 */
export type Linkage = 'average' | 'complete' | 'single';

/**
 * The Lance–Williams update: the distance from a third cluster to `keep` ∪ `gone`, given its
 * distances to each and their sizes, in the arithmetic `agnes` uses (both chains share it).
 */
export function mergedDistance(linkage: Linkage, sizeKeep: number, toKeep: number, sizeGone: number, toGone: number): number {
  if (linkage === 'single') return Math.min(toKeep, toGone);
  if (linkage === 'complete') return Math.max(toKeep, toGone);
  return (sizeKeep / (sizeKeep + sizeGone)) * toKeep + (sizeGone / (sizeKeep + sizeGone)) * toGone;
}

/** The clusters a chain walks over, by name (a cluster is named by its smallest member), dense or sparse. */
export interface ChainClusters {
  /**
   * The nearest active cluster to `cluster` within the cut, else -1; on a tie `previous` (the
   * chain's element before it, -1 for none) wins, so the chain ends, then the smallest name.
   */
  nearestWithinCut(cluster: number, previous: number): number;
  /** Merges `gone` into `keep` (keep < gone; `gone` is no longer active): the distances of the union to every other cluster. */
  merge(keep: number, gone: number): void;
  /** `cluster` has no active cluster within the cut: by reducibility it never merges again. */
  finish(cluster: number): void;
}

/**
 * The nearest-neighbour chain over clusters `0 … active.length − 1`, each active one starting as
 * its own member: grows a chain of nearest neighbours, merges the first reciprocal pair it meets,
 * and finishes a chain root with nothing within the cut, until no cluster is active. Both chains
 * (the dense matrix below, the sparse pairs of sparse-nearest-neighbour-chain.ts) walk it.
 */
export function walkNearestNeighbourChain(active: Uint8Array, clusters: ChainClusters): void {
  const m = active.length;
  const chain = new Int32Array(m);
  let chainLength = 0;
  let nextStart = 0;
  for (;;) {
    if (chainLength === 0) {
      while (nextStart < m && !active[nextStart]) nextStart++;
      if (nextStart === m) return;
      chain[chainLength++] = nextStart;
    }
    const a = chain[chainLength - 1]!;
    const previous = chainLength >= 2 ? chain[chainLength - 2]! : -1;
    const nearest = clusters.nearestWithinCut(a, previous);
    if (nearest === -1) {
      // Only the chain's root can get here: every later element has its predecessor within the cut.
      active[a] = 0;
      clusters.finish(a);
      chainLength--;
      continue;
    }
    if (nearest !== previous) {
      chain[chainLength++] = nearest;
      continue;
    }
    // a and nearest are reciprocal nearest neighbours: merge them into the smaller name.
    chainLength -= 2;
    const keep = Math.min(a, nearest);
    const gone = Math.max(a, nearest);
    active[gone] = 0;
    clusters.merge(keep, gone);
  }
}

/**
 * Partitions members `0 … m−1` at `cutHeight` under `linkage`, given their pairwise distance.
 * Returns groups of member indices (ascending), ordered by first member.
 */
export function nearestNeighbourChainCut(
  memberCount: number,
  distance: (a: number, b: number) => number,
  linkage: Linkage,
  cutHeight: number,
): number[][] {
  const m = memberCount;
  // Row-major upper-triangle condensed matrix: (i, j), i < j.
  const rowStart = new Float64Array(m);
  for (let i = 0; i < m; i++) rowStart[i] = i * m - (i * (i + 1)) / 2 - i - 1;
  const matrix = new Float64Array((m * (m - 1)) / 2);
  for (let i = 0; i < m; i++) {
    const base = rowStart[i]!;
    for (let j = i + 1; j < m; j++) matrix[base + j] = distance(i, j);
  }
  const at = (i: number, j: number): number => (i < j ? rowStart[i]! + j : rowStart[j]! + i);

  const active = new Uint8Array(m).fill(1);
  const size = new Int32Array(m).fill(1);
  const members: number[][] = Array.from({ length: m }, (_, index) => [index]);
  const finished: number[][] = [];
  walkNearestNeighbourChain(active, {
    nearestWithinCut(a, previous) {
      let nearest = previous;
      let best = previous === -1 ? Infinity : matrix[at(a, previous)]!;
      for (let k = 0; k < m; k++) {
        if (k === a || !active[k]) continue;
        const value = matrix[at(a, k)]!;
        if (value < best) {
          best = value;
          nearest = k;
        }
      }
      return best > cutHeight ? -1 : nearest;
    },
    merge(keep, gone) {
      const sizeKeep = size[keep]!;
      const sizeGone = size[gone]!;
      for (let k = 0; k < m; k++) {
        if (!active[k] || k === keep) continue;
        matrix[at(k, keep)] = mergedDistance(linkage, sizeKeep, matrix[at(k, keep)]!, sizeGone, matrix[at(k, gone)]!);
      }
      size[keep] = sizeKeep + sizeGone;
      const kept = members[keep]!;
      for (const member of members[gone]!) kept.push(member);
      members[gone] = [];
    },
    finish(a) {
      finished.push(members[a]!);
    },
  });
  return finished.map((group) => group.sort((x, y) => x - y)).sort((x, y) => x[0]! - y[0]!);
}
