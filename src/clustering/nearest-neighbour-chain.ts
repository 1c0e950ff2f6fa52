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

/**
 * The chain both chains walk (this file's dense one and sparse-nearest-neighbour-chain.ts), over
 * clusters named by their smallest member: it grows a chain of nearest neighbours from the first
 * active cluster, merges the first reciprocal pair it meets, and finishes a chain root with
 * nothing within the cut. The caller finds each nearest neighbour and applies each merge in its
 * own loop (where its distances are locals the engine keeps fast):
 *
 *   for (let a = walk.current(); a !== -1; a = walk.current()) {
 *     const step = walk.advance(nearestWithinCut(a, walk.previous()));
 *     if (step === 'merge') merge(walk.keep, walk.gone);
 *   }
 */
export class NearestNeighbourChain {
  private readonly chain: Int32Array;
  private length = 0;
  private nextStart = 0;
  /** After `advance` answered 'merge': the pair, named by the smaller name, which stays; `gone` is no longer active. */
  keep = -1;
  gone = -1;

  /** `active`: one flag per cluster, 1 while it may still merge; the walk clears it. */
  constructor(private readonly active: Uint8Array) {
    this.chain = new Int32Array(active.length);
  }

  /** The cluster whose nearest neighbour within the cut the walk needs next; -1 when none is active. */
  current(): number {
    if (this.length === 0) {
      const count = this.active.length;
      while (this.nextStart < count && !this.active[this.nextStart]) this.nextStart++;
      if (this.nextStart === count) return -1;
      this.chain[this.length++] = this.nextStart;
    }
    return this.chain[this.length - 1]!;
  }

  /** The chain's element before the current one (-1 for none): a nearest neighbour on a tie with it must be it, so the chain ends. */
  previous(): number {
    return this.length >= 2 ? this.chain[this.length - 2]! : -1;
  }

  /**
   * Takes the current cluster's nearest neighbour within the cut (-1 for none): 'finish' (the
   * current cluster never merges again: by reducibility nothing comes closer), 'extend', or
   * 'merge' (reciprocal nearest neighbours: `keep` and `gone` are set).
   */
  advance(nearest: number): 'finish' | 'extend' | 'merge' {
    const current = this.chain[this.length - 1]!;
    if (nearest === -1) {
      // Only the chain's root can get here: every later element has its predecessor within the cut.
      this.active[current] = 0;
      this.length--;
      return 'finish';
    }
    if (nearest !== this.previous()) {
      this.chain[this.length++] = nearest;
      return 'extend';
    }
    this.length -= 2;
    this.keep = Math.min(current, nearest);
    this.gone = Math.max(current, nearest);
    this.active[this.gone] = 0;
    return 'merge';
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
  const walk = new NearestNeighbourChain(active);
  for (let a = walk.current(); a !== -1; a = walk.current()) {
    const previous = walk.previous();
    // Nearest active neighbour of a within the cut; on a tie the previous chain element wins, so the chain ends.
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
    const step = walk.advance(best > cutHeight ? -1 : nearest);
    if (step === 'finish') {
      finished.push(members[a]!);
      continue;
    }
    if (step === 'extend') continue;
    const { keep, gone } = walk;
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
  }
  return finished.map((group) => group.sort((x, y) => x - y)).sort((x, y) => x[0]! - y[0]!);
}
