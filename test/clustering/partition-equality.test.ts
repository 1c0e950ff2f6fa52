import { describe, expect, it } from 'vitest';
import { clusterRuns, clusterVectors, type ClusterLinkage } from '../../src/clustering/cluster-goals.ts';
import { nearestNeighbourChainCut } from '../../src/clustering/nearest-neighbour-chain.ts';
import {
  meansByVisitingPairs,
  sparseEdgesOf,
  sparseNearestNeighbourChainCut,
} from '../../src/clustering/sparse-nearest-neighbour-chain.ts';
import {
  goalSimilarity,
  procedureTableFor,
  runSimilarity,
  type RunSimilarity,
  type SimilarityDesign,
  type SimilaritySettings,
} from '../../src/clustering/run-similarity.ts';
import { tauComponents, thresholdComponents } from '../../src/clustering/tau-components.ts';
import { ProcedureTable, type ProcedureTrace } from '../../src/clustering/tool-sequence-similarity.ts';
import { createSeededRandom } from '../../src/clustering/seeded-random.ts';
import { wholeSetPartition } from '../support/reference-clustering.ts';
import { randomUnitVectors, structuredUnitVectors } from '../support/synthetic-vectors.ts';

/** A partition as a canonical string: members sorted, parts sorted by first member. */
function canonical(parts: number[][]): string {
  return JSON.stringify(parts.map((part) => [...part].sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!));
}

/** Our clusters plus every vector left alone, so both sides partition the whole set. */
function withSingletons(count: number, clusters: number[][]): number[][] {
  const covered = new Set(clusters.flat());
  const singletons = Array.from({ length: count }, (_, index) => index)
    .filter((index) => !covered.has(index))
    .map((index) => [index]);
  return [...clusters, ...singletons];
}

async function expectSamePartitionAsWholeSet(vectors: Float32Array[], similarityTau: number, linkage: ClusterLinkage) {
  const ours = await clusterVectors(vectors, { similarityTau, linkage });
  const whole = wholeSetPartition(vectors.length, goalSimilarity(vectors, similarityTau), linkage);
  expect(canonical(withSingletons(vectors.length, ours.clusters))).toBe(canonical(whole));
  return ours;
}

async function expectSameRunPartitionAsWholeSet(
  vectors: Float32Array[],
  similarity: RunSimilarity,
  linkage: ClusterLinkage,
  denseComponentLimit?: number,
) {
  const ours = await clusterRuns(vectors, similarity, { linkage, denseComponentLimit });
  const whole = wholeSetPartition(vectors.length, similarity, linkage);
  expect(canonical(withSingletons(vectors.length, ours.clusters))).toBe(canonical(whole));
  return ours;
}

/** Random procedures over a small tool vocabulary: some shared, some with an extra step, some incomplete. */
function randomTraces(count: number, seed: number): ProcedureTrace[] {
  const random = createSeededRandom(seed);
  const tools = ['search', 'select', 'book', 'pay', 'notify', 'verify', 'lookup'];
  const bases = Array.from({ length: 5 }, () => Array.from({ length: random.integer(2, 5) }, () => random.pick(tools)));
  return Array.from({ length: count }, () => {
    const base = [...random.pick(bases)];
    if (random.chance(0.3)) base.splice(random.integer(0, base.length), 0, random.pick(tools));
    return { tools: random.chance(0.15) ? base.slice(0, random.integer(0, base.length)) : base };
  });
}

const linkages: ClusterLinkage[] = ['average', 'complete', 'single'];

describe('τ-component clustering equals ml-hclust on the whole set', () => {
  // 550 goals in families of 19 keep what 1,200 in families of 40 had (over a hundred τ-components:
  // 120; clusters of up to 18–24 with inner structure; duplicate ties) at a tenth of the whole-set
  // reference's O(n³) agnes, which is most of this file's time (700 in families of 24: 126
  // components, twice the agnes). The sizes of the random sets below were cut the same way, each
  // keeping what its name says: one tangled component of 400 (94–129 clusters at average and
  // complete linkage), and 367 components at τ = 0.95 among 400.
  const structured = structuredUnitVectors(550, 64, 7, { familySize: 19 }).vectors;

  for (const linkage of linkages) {
    it(`gives the same partition as whole-set ${linkage} linkage on 550 structured goal-like vectors`, async () => {
      const ours = await expectSamePartitionAsWholeSet(structured, 0.82, linkage);
      // The data must make the comparison meaningful: many components, some with inner structure.
      expect(ours.componentCount).toBeGreaterThan(100);
      expect(ours.clusters.length).toBeGreaterThan(50);
      expect(Math.max(...ours.clusters.map((cluster) => cluster.length))).toBeGreaterThan(15);
    });
  }

  for (const linkage of linkages) {
    it(`gives the same partition as whole-set ${linkage} linkage on 400 random 4-d vectors (one tangled component)`, async () => {
      const vectors = randomUnitVectors(400, 4, 11);
      const ours = await expectSamePartitionAsWholeSet(vectors, 0.9, linkage);
      if (linkage !== 'single') expect(ours.clusters.length).toBeGreaterThan(20);
    });

    it(`gives the same partition as whole-set ${linkage} linkage on 400 random 6-d vectors at τ = 0.95 (many components)`, async () => {
      const vectors = randomUnitVectors(400, 6, 5);
      const ours = await expectSamePartitionAsWholeSet(vectors, 0.95, linkage);
      expect(ours.componentCount).toBeGreaterThan(10);
    });

    it(`breaks distance ties the way ml-hclust does under ${linkage} linkage (every vector triplicated)`, async () => {
      const base = randomUnitVectors(120, 3, 3);
      const vectors = [...base, ...base.map((vector) => vector.slice()), ...base.map((vector) => vector.slice())];
      await expectSamePartitionAsWholeSet(vectors, 0.97, linkage);
    });
  }
});

describe('the nearest-neighbour chain equals ml-hclust on the whole set', () => {
  for (const linkage of linkages) {
    it(`cuts the same partition as agnes under ${linkage} linkage at every height (random 3-d vectors, no τ-components)`, () => {
      const vectors = randomUnitVectors(150, 3, 17);
      const similarity = goalSimilarity(vectors, 0.5);
      for (const cutHeight of [0.001, 0.01, 0.05, 0.2, 0.6, 1.2, 2]) {
        const chain = nearestNeighbourChainCut(vectors.length, similarity.distance, linkage, cutHeight);
        const whole = wholeSetPartition(vectors.length, { ...similarity, cutHeight }, linkage);
        expect(canonical(chain)).toBe(canonical(whole));
      }
    });
  }
});

/** Every pair within the similarity's cut, as the sparse chain takes them. */
function edgesWithinCut(count: number, similarity: RunSimilarity) {
  const from: number[] = [];
  const to: number[] = [];
  const distance: number[] = [];
  for (let j = 0; j < count; j++) {
    for (let i = 0; i < j; i++) {
      const value = similarity.distance(i, j);
      if (value <= similarity.cutHeight) {
        from.push(i);
        to.push(j);
        distance.push(value);
      }
    }
  }
  return sparseEdgesOf(count, { count: from.length, from, to, distance });
}

describe('the sparse nearest-neighbour chain equals ml-hclust and the dense chain', () => {
  const designs: SimilaritySettings[] = [
    { design: 'goal', goalTau: 0.6, clusterTau: 0, toolTau: 0, goalWeight: 0 },
    { design: 'mix', goalTau: 0, clusterTau: 0.7, toolTau: 0, goalWeight: 0.5 },
    { design: 'product', goalTau: 0, clusterTau: 0.6, toolTau: 0, goalWeight: 0 },
    { design: 'gate', goalTau: 0.6, clusterTau: 0, toolTau: 0.6, goalWeight: 0 },
    { design: 'evidence', goalTau: 0, clusterTau: 0.7, toolTau: 0, goalWeight: 0.6 },
  ];
  for (const settings of designs) {
    for (const linkage of linkages) {
      it(`${settings.design}, ${linkage} linkage: one tangled component of 300 runs, pairs beyond the cut never stored`, () => {
        const vectors = randomUnitVectors(300, 4, 31);
        const procedures = procedureTableFor(randomTraces(300, 31), settings.design, 3);
        const similarity = runSimilarity(vectors, procedures, settings);
        const edges = edgesWithinCut(300, similarity);
        // The data must exercise the sparse path: most pairs are missing, clusters form inside.
        expect(edges.neighbours.length / 2).toBeLessThan((300 * 299) / 2 / 3);
        const whole = canonical(wholeSetPartition(300, similarity, linkage));
        const dense = canonical(nearestNeighbourChainCut(300, similarity.distance, linkage, similarity.cutHeight));
        const byPairs = sparseNearestNeighbourChainCut(
          300,
          edges,
          linkage,
          similarity.cutHeight,
          meansByVisitingPairs(similarity.distance),
        );
        expect(canonical(byPairs)).toBe(whole);
        expect(dense).toBe(whole);
        if (linkage !== 'single') expect(byPairs.filter((part) => part.length > 1).length).toBeGreaterThan(10);
        const sums = similarity.meanDistanceSums;
        if (sums) {
          expect(canonical(sparseNearestNeighbourChainCut(300, edges, linkage, similarity.cutHeight, sums))).toBe(whole);
        }
      });
    }
  }

  it('clusterRuns takes the sparse chain for a component past the dense limit and gives the same partition', async () => {
    const vectors = randomUnitVectors(400, 5, 41);
    const procedures = new ProcedureTable(randomTraces(400, 41));
    const similarity = runSimilarity(vectors, procedures, designs[1]!);
    const dense = await clusterRuns(vectors, similarity, { linkage: 'average' });
    const sparse = await clusterRuns(vectors, similarity, { linkage: 'average', denseComponentLimit: 10 });
    expect(sparse.largestComponentSize).toBeGreaterThan(10);
    expect(sparse.clusters).toEqual(dense.clusters);
    expect(canonical(withSingletons(400, sparse.clusters))).toBe(canonical(wholeSetPartition(400, similarity, 'average')));
  });
});

describe('procedure-aware clustering equals ml-hclust on the whole set under the same similarity', () => {
  const designs: SimilaritySettings[] = [
    { design: 'product', goalTau: 0, clusterTau: 0.75, toolTau: 0, goalWeight: 0 },
    { design: 'mix', goalTau: 0, clusterTau: 0.8, toolTau: 0, goalWeight: 0.5 },
    { design: 'gate', goalTau: 0.75, clusterTau: 0, toolTau: 0.7, goalWeight: 0 },
    { design: 'evidence', goalTau: 0, clusterTau: 0.8, toolTau: 0, goalWeight: 0.6 },
  ];
  for (const settings of designs) {
    for (const linkage of linkages) {
      it(`${settings.design}: ${linkage} linkage on 400 runs (random 6-d goals, random procedures)`, async () => {
        const vectors = randomUnitVectors(400, 6, 23);
        const procedures = procedureTableFor(randomTraces(400, 23), settings.design, 3);
        const similarity = runSimilarity(vectors, procedures, settings);
        const ours = await expectSameRunPartitionAsWholeSet(vectors, similarity, linkage);
        expect(ours.componentCount).toBeGreaterThan(5);
        expect(ours.clusters.length).toBeGreaterThan(5);
      });
    }
  }

  it('holds for any small set of runs, design, τ and linkage (property)', async () => {
    const { default: fc } = await import('fast-check');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 50 }),
        fc.integer({ min: 2, max: 5 }),
        fc.constantFrom<SimilarityDesign>('goal', 'product', 'mix', 'gate', 'evidence'),
        fc.double({ min: 0.3, max: 0.95, noNaN: true }),
        fc.double({ min: 0.3, max: 0.95, noNaN: true }),
        fc.double({ min: 0.2, max: 0.8, noNaN: true }),
        fc.constantFrom<ClusterLinkage>('average', 'complete', 'single'),
        fc.constantFrom(undefined, 2),
        async (seed, count, dimension, design, tau, toolTau, goalWeight, linkage, denseComponentLimit) => {
          const vectors = randomUnitVectors(count, dimension, seed);
          const procedures = procedureTableFor(randomTraces(count, seed), design, 3);
          const similarity = runSimilarity(vectors, procedures, { design, goalTau: tau, clusterTau: tau, toolTau, goalWeight });
          await expectSameRunPartitionAsWholeSet(vectors, similarity, linkage, denseComponentLimit);
        },
      ),
      { numRuns: 150, seed: 20261201 },
    );
  });
});

describe('tauComponents', () => {
  it('finds the same components by float32 matrix-product candidates as by comparing every pair (structured, 3,000 × 384)', async () => {
    const { vectors } = structuredUnitVectors(3000, 384, 21);
    const product = await tauComponents(vectors, 0.82, { candidates: 'matrix-product' });
    const allPairs = await tauComponents(vectors, 0.82, { candidates: 'all-pairs' });
    expect(product.components).toEqual(allPairs.components);
    expect(product.components.length).toBeGreaterThan(50);
    expect(product.comparedPairs).toBeLessThan(allPairs.comparedPairs / 20);
  });

  it('finds the same components by matrix-product candidates on random low-dimensional data, near-threshold pairs included', async () => {
    const vectors = randomUnitVectors(2500, 5, 8);
    const product = await tauComponents(vectors, 0.9, { candidates: 'matrix-product' });
    const allPairs = await tauComponents(vectors, 0.9, { candidates: 'all-pairs' });
    expect(product.components).toEqual(allPairs.components);
  });

  it('finds the same components and edges from the procedure-aware bound as from every pair (mix, product, gate and evidence)', async () => {
    const vectors = randomUnitVectors(1200, 6, 13);
    const traces = randomTraces(1200, 13);
    for (const settings of [
      { design: 'evidence', goalTau: 0, clusterTau: 0.8, toolTau: 0, goalWeight: 0.6 },
      { design: 'mix', goalTau: 0, clusterTau: 0.8, toolTau: 0, goalWeight: 0.5 },
      { design: 'product', goalTau: 0, clusterTau: 0.7, toolTau: 0, goalWeight: 0 },
      { design: 'gate', goalTau: 0.8, clusterTau: 0, toolTau: 0.7, goalWeight: 0 },
    ] satisfies SimilaritySettings[]) {
      const similarity = runSimilarity(vectors, procedureTableFor(traces, settings.design, 3), settings);
      const product = await thresholdComponents(vectors, similarity, { candidates: 'matrix-product' });
      const allPairs = await thresholdComponents(vectors, similarity, { candidates: 'all-pairs' });
      expect(product.components).toEqual(allPairs.components);
      expect(product.edgeCount).toBe(allPairs.edgeCount);
      // The tool signal prunes: far fewer pairs reach the exact check than every pair.
      expect(product.comparedPairs).toBeLessThan(allPairs.comparedPairs / 3);
    }
  });

  it('refuses vectors that are not L2-normalised', async () => {
    const vectors = [Float32Array.from([1, 0]), Float32Array.from([0.6, 0.8]), Float32Array.from([3, 4])];
    await expect(tauComponents(vectors, 0.82)).rejects.toThrow(/vector 2 is not L2-normalised/);
  });

  it('joins exactly the pairs whose cosine reaches τ', async () => {
    const at = (angle: number) => Float32Array.from([Math.cos(angle), Math.sin(angle)]);
    // cos(0.5) ≈ 0.8776 ≥ 0.82 links the first two; the third is 0.9 rad from the second (cos ≈ 0.62).
    const result = await tauComponents([at(0), at(0.5), at(1.4)], 0.82);
    expect(result.components).toEqual([[0, 1], [2]]);
    expect(result.edgeCount).toBe(1);
  });
});

describe('τ-component clustering equals ml-hclust on the whole set (property)', () => {
  it('holds for any small set of unit vectors, τ and linkage', async () => {
    const { default: fc } = await import('fast-check');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 60 }),
        fc.integer({ min: 2, max: 5 }),
        fc.double({ min: 0.5, max: 0.99, noNaN: true }),
        fc.constantFrom<ClusterLinkage>('average', 'complete', 'single'),
        fc.boolean(),
        async (seed, count, dimension, similarityTau, linkage, duplicate) => {
          const base = randomUnitVectors(count, dimension, seed);
          const vectors = duplicate ? [...base, ...base.slice(0, count >> 1).map((vector) => vector.slice())] : base;
          await expectSamePartitionAsWholeSet(vectors, similarityTau, linkage);
        },
      ),
      { numRuns: 200, seed: 20261129 },
    );
  });
});
