/**
 * The nearest-neighbour chain of nearest-neighbour-chain.ts without its m(m−1)/2 matrix: for a
 * threshold-graph component too large for one, it keeps only the cluster pairs within the cut.
 *
 * Why that is exact: a merge at or below the cut h joins clusters whose linkage distance is ≤ h,
 * and for single, average and complete linkage that needs at least one pair of members within
 * h — an edge. So a cluster's candidates are the clusters it has a stored pair with, and a pair
 * whose linkage distance exceeds h can be forgotten: by reducibility, merging two clusters never
 * brings a third closer than it was to one of them, so such a pair only matters again through a
 * merge with a cluster that is within h, and then its exact distance is needed in that update.
 * Complete linkage needs nothing more (the maximum with a pair beyond h is beyond h), single
 * linkage takes the other side. Average linkage computes the forgotten side exactly: from the
 * similarity's sums when it has a closed form (run-similarity.ts `MeanDistanceSums`), otherwise
 * by visiting every pair of members. Merges follow the same chain, tie-breaks and Lance–Williams
 * arithmetic as the dense chain, so the cut is the same partition.
 *
 * Singletons read their pairs from the edge lists (CSR) as given; a merged cluster holds a map of
 * the clusters within h of it, and every merged neighbour holds the same value back.
 */
import { mergedDistance, NearestNeighbourChain, type Linkage } from './nearest-neighbour-chain.ts';

/** Symmetric adjacency of members 0 … m−1: neighbours of i are `neighbours[offsets[i] … offsets[i+1])`. */
export interface SparseEdges {
  offsets: Int32Array;
  neighbours: Int32Array;
  distances: Float64Array;
}

/** The exact mean distance between two disjoint clusters, from per-cluster summaries. */
export interface ClusterMeans<Summary> {
  of(member: number): Summary;
  union(a: Summary, b: Summary): Summary;
  mean(a: Summary, b: Summary): number;
}

/** `ClusterMeans` for any distance: a cluster is its member list and the mean visits every pair. */
export function meansByVisitingPairs(distance: (a: number, b: number) => number): ClusterMeans<number[]> {
  return {
    of: (member) => [member],
    union: (a, b) => [...a, ...b],
    mean: (a, b) => {
      let sum = 0;
      for (const x of a) for (const y of b) sum += distance(x, y);
      return sum / (a.length * b.length);
    },
  };
}

/**
 * The symmetric CSR of `count` members from an edge list: `local` maps an edge's endpoint to its
 * member index, or −1 to leave the edge out (edges of other components).
 */
export function sparseEdgesOf(
  count: number,
  edges: { count: number; from: ArrayLike<number>; to: ArrayLike<number>; distance: ArrayLike<number> },
  local: (node: number) => number = (node) => node,
): SparseEdges {
  const offsets = new Int32Array(count + 1);
  for (let e = 0; e < edges.count; e++) {
    const a = local(edges.from[e]!);
    if (a === -1) continue;
    offsets[a + 1]!++;
    offsets[local(edges.to[e]!) + 1]!++;
  }
  for (let i = 0; i < count; i++) offsets[i + 1]! += offsets[i]!;
  const fill = offsets.slice(0, count);
  const neighbours = new Int32Array(offsets[count]!);
  const distances = new Float64Array(offsets[count]!);
  for (let e = 0; e < edges.count; e++) {
    const a = local(edges.from[e]!);
    if (a === -1) continue;
    const b = local(edges.to[e]!);
    neighbours[fill[a]!] = b;
    distances[fill[a]!++] = edges.distance[e]!;
    neighbours[fill[b]!] = a;
    distances[fill[b]!++] = edges.distance[e]!;
  }
  return { offsets, neighbours, distances };
}

/**
 * Partitions members `0 … m−1` at `cutHeight` under `linkage`, given their pairs within the cut.
 * Returns groups of member indices (ascending), ordered by first member — what
 * `nearestNeighbourChainCut` returns for the full distance matrix.
 */
export function sparseNearestNeighbourChainCut<Summary>(
  memberCount: number,
  edges: SparseEdges,
  linkage: Linkage,
  cutHeight: number,
  means: ClusterMeans<Summary>,
): number[][] {
  const m = memberCount;
  const { offsets, neighbours, distances } = edges;
  // A cluster is named by its smallest member (the dense chain keeps the smaller index too); its
  // members are a union-find tree (whose root carries the name) and a linked list.
  const parent = Int32Array.from({ length: m }, (_, index) => index);
  const nameOfRoot = Int32Array.from({ length: m }, (_, index) => index);
  const rootOfName = Int32Array.from({ length: m }, (_, index) => index);
  const nextMember = new Int32Array(m).fill(-1);
  const lastMember = Int32Array.from({ length: m }, (_, index) => index);
  const owner = (member: number): number => {
    let root = member;
    while (parent[root] !== root) root = parent[root]!;
    while (parent[member] !== root) {
      const next = parent[member]!;
      parent[member] = root;
      member = next;
    }
    return nameOfRoot[root]!;
  };
  const active = new Uint8Array(m).fill(1);
  const size = new Int32Array(m).fill(1);
  const near: (Map<number, number> | undefined)[] = new Array<Map<number, number> | undefined>(m);
  const summaries: (Summary | undefined)[] = new Array<Summary | undefined>(m);
  const summaryOf = (cluster: number): Summary => (summaries[cluster] ??= means.of(cluster));

  // Scratch for one merge: the two sides' distances by neighbour.
  const seen = new Int32Array(m).fill(-1);
  const sideA = new Float64Array(m).fill(NaN);
  const sideB = new Float64Array(m).fill(NaN);
  let epoch = 0;

  /** Calls visit(cluster, distance) for every cluster within the cut of `cluster` (a merged one may repeat). */
  const forEachNear = (cluster: number, visit: (other: number, distance: number) => void): void => {
    const map = near[cluster];
    if (map) {
      for (const [other, distance] of map) visit(other, distance);
      return;
    }
    for (let e = offsets[cluster]!; e < offsets[cluster + 1]!; e++) {
      const other = owner(neighbours[e]!);
      if (size[other] === 1) visit(other, distances[e]!);
      else {
        const distance = near[other]!.get(cluster);
        if (distance !== undefined) visit(other, distance);
      }
    }
  };

  const finished: number[] = [];
  const walk = new NearestNeighbourChain(active);
  for (let a = walk.current(); a !== -1; a = walk.current()) {
    const previous = walk.previous();
    // Nearest cluster within the cut: smallest distance, then the previous chain element, then the smallest name.
    let nearest = -1;
    let best = Infinity;
    forEachNear(a, (other, distance) => {
      if (
        distance < best ||
        (distance === best && other !== nearest && (other === previous || (nearest !== previous && other < nearest)))
      ) {
        best = distance;
        nearest = other;
      }
    });
    const step = walk.advance(nearest);
    if (step === 'finish') {
      finished.push(a);
      continue;
    }
    if (step === 'extend') continue;
    const { keep, gone } = walk;
    const sizeKeep = size[keep]!;
    const sizeGone = size[gone]!;

    epoch++;
    const touched: number[] = [];
    const note = (side: Float64Array) => (other: number, distance: number) => {
      if (other === keep || other === gone) return;
      if (seen[other] !== epoch) {
        seen[other] = epoch;
        sideA[other] = NaN;
        sideB[other] = NaN;
        touched.push(other);
      }
      side[other] = distance;
    };
    forEachNear(keep, note(sideA));
    forEachNear(gone, note(sideB));

    const merged = new Map<number, number>();
    const summaryKeep = linkage === 'average' ? summaryOf(keep) : undefined;
    const summaryGone = linkage === 'average' ? summaryOf(gone) : undefined;
    for (const other of touched) {
      let toKeep = sideA[other]!;
      let toGone = sideB[other]!;
      // A side beyond the cut: exact for average linkage; for single and complete any value past the cut gives the same answer.
      if (Number.isNaN(toKeep)) toKeep = linkage === 'average' ? means.mean(summaryKeep!, summaryOf(other)) : Infinity;
      if (Number.isNaN(toGone)) toGone = linkage === 'average' ? means.mean(summaryGone!, summaryOf(other)) : Infinity;
      const distance = mergedDistance(linkage, sizeKeep, toKeep, sizeGone, toGone);
      const otherMap = near[other];
      if (otherMap) {
        otherMap.delete(gone);
        if (distance <= cutHeight) otherMap.set(keep, distance);
        else otherMap.delete(keep);
      }
      if (distance <= cutHeight) merged.set(other, distance);
    }

    near[keep] = merged;
    near[gone] = undefined;
    if (linkage === 'average') summaries[keep] = means.union(summaryKeep!, summaryGone!);
    summaries[gone] = undefined;
    size[keep] = sizeKeep + sizeGone;
    const rootKeep = rootOfName[keep]!;
    const rootGone = rootOfName[gone]!;
    const root = sizeKeep >= sizeGone ? rootKeep : rootGone;
    parent[rootKeep] = root;
    parent[rootGone] = root;
    nameOfRoot[root] = keep;
    rootOfName[keep] = root;
    nextMember[lastMember[keep]!] = gone;
    lastMember[keep] = lastMember[gone]!;
  }
  return finished
    .map((cluster) => {
      const group: number[] = [];
      for (let member = cluster; member !== -1; member = nextMember[member]!) group.push(member);
      return group.sort((x, y) => x - y);
    })
    .sort((x, y) => x[0]! - y[0]!);
}
