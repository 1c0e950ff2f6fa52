import { describe, expect, it } from 'vitest';
import { parseSimilarityDesign, runSimilarity, type SimilaritySettings } from '../../src/clustering/run-similarity.ts';
import { ProcedureTable } from '../../src/clustering/tool-sequence-similarity.ts';

// The benchmarks' design strings (bench/cluster-designs.bench.ts, bench/cluster-replicated.bench.ts).
describe('parseSimilarityDesign', () => {
  it('reads τ and the third number as the design needs them', () => {
    expect(parseSimilarityDesign('mix:0.7:0.5')).toMatchObject({ design: 'mix', clusterTau: 0.7, goalWeight: 0.5 });
    expect(parseSimilarityDesign('gate:0.4:0.8')).toMatchObject({ design: 'gate', goalTau: 0.4, toolTau: 0.8 });
    expect(parseSimilarityDesign('goal:0.5')).toMatchObject({ design: 'goal', goalTau: 0.5 });
  });

  it('refuses a design it does not know', () => {
    expect(() => parseSimilarityDesign('blend:0.7:0.5')).toThrow(/unknown similarity design "blend"/);
  });
});

// The candidate search leaves out every pair below `goalNeeded` of an upper bound of its tool
// similarity: that must never drop an edge, for any design, goal cosine and tool similarity.
describe('candidateBound.goalNeeded', () => {
  it('is at most the goal cosine of every edge whose tool similarity is at most the bound (property)', async () => {
    const { default: fc } = await import('fast-check');
    const procedures = new ProcedureTable([{ tools: [] }, { tools: [] }]);
    const unit = (angle: number) => Float32Array.of(Math.cos(angle), Math.sin(angle));
    const design = fc.oneof(
      fc.record({ design: fc.constant('goal' as const), goalTau: fc.double({ min: 0.05, max: 0.99, noNaN: true }) }),
      fc.record({ design: fc.constant('product' as const), clusterTau: fc.double({ min: 0.05, max: 1, noNaN: true }) }),
      fc.record({
        design: fc.constant('mix' as const),
        clusterTau: fc.double({ min: 0.05, max: 1, noNaN: true }),
        goalWeight: fc.double({ min: 0.05, max: 1, noNaN: true }),
      }),
      fc.record({
        design: fc.constant('gate' as const),
        goalTau: fc.double({ min: 0.05, max: 0.95, noNaN: true }),
        toolTau: fc.double({ min: 0.05, max: 0.95, noNaN: true }),
      }),
    );
    fc.assert(
      fc.property(
        design,
        fc.double({ min: 0, max: Math.PI, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (partial, angle, toolSimilarity, slack) => {
          const settings: SimilaritySettings = { goalTau: 0.5, clusterTau: 0.5, toolTau: 0.5, goalWeight: 0.5, ...partial };
          const vectors = [unit(0), unit(angle)];
          const similarity = runSimilarity(vectors, procedures, settings);
          // The pair's tool similarity is whatever the property draws (the table is only a stand-in).
          Object.assign(procedures, { similarity: () => toolSimilarity });
          const goal = vectors[0]![0]! * vectors[1]![0]! + vectors[0]![1]! * vectors[1]![1]!;
          if (similarity.distance(0, 1) > similarity.cutHeight) return;
          const toolBound = toolSimilarity + slack * (1 - toolSimilarity);
          expect(goal).toBeGreaterThanOrEqual(similarity.candidateBound.goalNeeded(toolBound) - 1e-9);
        },
      ),
      { numRuns: 3000, seed: 20261201 },
    );
  });
});
