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
  const chain = new Int32Array(m);
  let chainLength = 0;
  let nextStart = 0;
  const finished: number[][] = [];

  for (;;) {
    if (chainLength === 0) {
      while (nextStart < m && !active[nextStart]) nextStart++;
      if (nextStart === m) break;
      chain[chainLength++] = nextStart;
    }
    const a = chain[chainLength - 1]!;
    // Nearest active neighbour of a; on a tie the previous chain element wins, so the chain ends.
    let nearest = -1;
    let best = Infinity;
    if (chainLength >= 2) {
      nearest = chain[chainLength - 2]!;
      best = matrix[at(a, nearest)]!;
    }
    for (let k = 0; k < m; k++) {
      if (k === a || !active[k]) continue;
      const value = matrix[at(a, k)]!;
      if (value < best) {
        best = value;
        nearest = k;
      }
    }
    if (nearest === -1 || best > cutHeight) {
      // Only the chain's root can get here: every later element has its predecessor within h.
      active[a] = 0;
      finished.push(members[a]!);
      chainLength--;
      continue;
    }
    if (chainLength < 2 || nearest !== chain[chainLength - 2]) {
      chain[chainLength++] = nearest;
      continue;
    }
    // a and nearest are reciprocal nearest neighbours: merge them into `keep`.
    chainLength -= 2;
    const keep = Math.min(a, nearest);
    const gone = Math.max(a, nearest);
    const sizeKeep = size[keep]!;
    const sizeGone = size[gone]!;
    active[gone] = 0;
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
