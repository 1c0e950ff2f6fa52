import { describe, expect, it } from 'vitest';
import { splitGoalDeterminedVariants, type VariantRuns } from '../../src/clustering/goal-determined-variants.ts';
import { runSimilarity } from '../../src/clustering/run-similarity.ts';
import { ProcedureTable } from '../../src/clustering/tool-sequence-similarity.ts';
import { createSeededRandom } from '../../src/runs/seeded-random.ts';
import { noisyNeighbour, randomUnitVectors } from '../support/synthetic-vectors.ts';

const dimension = 32;
const oneDetail = ['attractions.search', 'attraction.details'];
const twoDetails = ['attractions.search', 'attraction.details', 'attraction.details'];

/** Runs of one cluster: their goal vectors, successful tool sequences, and the VariantRuns view of them. */
function cluster(goals: Float32Array[], tools: string[][], failed: ReadonlySet<number> = new Set()): VariantRuns {
  const procedures = new ProcedureTable(tools.map((sequence) => ({ tools: sequence })));
  const similarity = runSimilarity(goals, procedures, { design: 'mix', goalTau: 0.5, clusterTau: 0.7, toolTau: 0.85, goalWeight: 0.5 });
  return {
    vectors: goals,
    traceOf: (run) => procedures.traceOfRun[run]!,
    successful: (run) => !failed.has(run),
    distance: similarity.distance,
  };
}

describe('a cluster splits into the procedure variants its goals decide (goal-determined-variants)', () => {
  const [oneDirection, twoDirection] = randomUnitVectors(2, dimension, 5);

  it('variants the goals tell apart become clusters of their own; the other runs join the nearest', () => {
    const random = createSeededRandom(3);
    const goals = [
      ...Array.from({ length: 8 }, () => noisyNeighbour(random, oneDirection!, 0.9)),
      ...Array.from({ length: 8 }, () => noisyNeighbour(random, twoDirection!, 0.9)),
      noisyNeighbour(random, twoDirection!, 0.9),
    ];
    const tools = [...Array.from({ length: 8 }, () => oneDetail), ...Array.from({ length: 8 }, () => twoDetails), ['attractions.search']];
    const parts = splitGoalDeterminedVariants(
      goals.map((_, run) => run),
      cluster(goals, tools, new Set([16])),
      3,
    );
    expect(parts).toEqual([
      [0, 1, 2, 3, 4, 5, 6, 7],
      [8, 9, 10, 11, 12, 13, 14, 15, 16],
    ]);
  });

  it('variants the goals do not predict (an optional step, a loop whose count the wording does not give) stay one cluster', () => {
    const random = createSeededRandom(4);
    const goals = Array.from({ length: 12 }, () => noisyNeighbour(random, oneDirection!, 0.9));
    const tools = goals.map((_, run) => (run % 2 === 0 ? oneDetail : twoDetails));
    const all = goals.map((_, run) => run);
    expect(splitGoalDeterminedVariants(all, cluster(goals, tools), 3)).toEqual([all]);
  });

  it('needs two variants each followed by minRuns successful runs, and agreement beyond chance', () => {
    const random = createSeededRandom(6);
    const goals = [
      ...Array.from({ length: 6 }, () => noisyNeighbour(random, oneDirection!, 0.9)),
      ...Array.from({ length: 2 }, () => noisyNeighbour(random, twoDirection!, 0.9)),
    ];
    const tools = [...Array.from({ length: 6 }, () => oneDetail), ...Array.from({ length: 2 }, () => twoDetails)];
    const all = goals.map((_, run) => run);
    // two runs of a variant are no procedure of their own
    expect(splitGoalDeterminedVariants(all, cluster(goals, tools), 3)).toEqual([all]);
    // 2 + 2 runs that agree perfectly: too few to rule out chance
    const few = [0, 1, 6, 7];
    expect(splitGoalDeterminedVariants(few, cluster(goals, tools), 2)).toEqual([few]);
  });
});
