import { describe, expect, it } from 'vitest';
import {
  goalsDetermineGroups,
  runsToWord,
  splitGoalDeterminedVariants,
  type VariantRuns,
} from '../../src/clustering/goal-determined-variants.ts';
import { runSimilarity } from '../../src/clustering/run-similarity.ts';
import { ProcedureTable } from '../../src/clustering/tool-sequence-similarity.ts';
import { createSeededRandom } from '../../src/clustering/seeded-random.ts';
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

describe('goals tell groups of runs apart (goalsDetermineGroups: what the variant split and reconcile ask)', () => {
  const [oneDirection, twoDirection] = randomUnitVectors(2, dimension, 7);

  it('when nearly every goal is nearer its own group, beyond what the same goals shuffled reach', () => {
    const random = createSeededRandom(8);
    const apart = [
      Array.from({ length: 8 }, () => noisyNeighbour(random, oneDirection!, 0.9)),
      Array.from({ length: 8 }, () => noisyNeighbour(random, twoDirection!, 0.9)),
    ];
    expect(goalsDetermineGroups(apart, 1)).toBe(true);
  });

  it('not for two groups of goals of one job, nor for groups too small for chance to be ruled out', () => {
    const random = createSeededRandom(9);
    const oneJob = Array.from({ length: 16 }, () => noisyNeighbour(random, oneDirection!, 0.9));
    expect(goalsDetermineGroups([oneJob.slice(0, 8), oneJob.slice(8)], 1)).toBe(false);
    const small = [
      Array.from({ length: 3 }, () => noisyNeighbour(random, oneDirection!, 0.95)),
      Array.from({ length: 3 }, () => noisyNeighbour(random, twoDirection!, 0.95)),
    ];
    expect(goalsDetermineGroups(small, 1)).toBe(false);
    expect(goalsDetermineGroups([oneJob, []], 1)).toBe(false);
  });
});

describe('a cluster splits into loops whose count every goal states (goal-determined-variants, stated-counts)', () => {
  const [direction] = randomUnitVectors(1, dimension, 9);
  const search = { tool: 'Search_Hotels', argumentNames: ['dest_id'] };
  const policies = { tool: 'Get_Hotel_Policies', argumentNames: ['hotel_id'] };
  const cities = ['Paris', 'Madrid', 'Rome', 'Oslo', 'Tokyo', 'Lima', 'Cairo', 'Perth', 'Quito', 'Seoul', 'Delhi', 'Dakar'];

  /** One run per goal, looking up `count` hotels' policies; goals read alike (their vectors are paraphrases of one direction). */
  function loopRuns(runs: Array<{ goal: string; count: number }>, failed: ReadonlySet<number> = new Set()): VariantRuns {
    const random = createSeededRandom(11);
    const calls = runs.map(({ count }) => [search, ...Array.from({ length: count }, () => policies)]);
    return {
      ...cluster(
        runs.map(() => noisyNeighbour(random, direction!, 0.9)),
        calls.map((sequence) => sequence.map((call) => call.tool)),
        failed,
      ),
      wording: { goal: (run) => runs[run]!.goal, calls: (run) => calls[run]! },
    };
  }
  const asked = (count: number, words: string) =>
    cities.slice(0, 5).map((city) => ({ goal: `Find ${words} accessible hotels in ${city} and compare their policies.`, count }));

  it('two hotels’ policies and three are two procedures; a rarer count stays apart; a failed run joins the nearest', () => {
    const runs = [
      ...asked(2, 'two'),
      ...asked(3, 'three'),
      { goal: 'Find five accessible hotels in Lima and compare their policies.', count: 5 },
    ];
    const all = [...runs.map((_, run) => run), runs.length];
    const withFailed = [...runs, { goal: 'Find two accessible hotels in Perth and compare their policies.', count: 1 }];
    const parts = splitGoalDeterminedVariants(all, loopRuns(withFailed, new Set([11])), 3);
    expect(parts).toHaveLength(3);
    expect(parts).toContainEqual([10]);
    expect(parts.find((part) => part.includes(0))).toEqual(expect.arrayContaining([0, 1, 2, 3, 4]));
    expect(parts.find((part) => part.includes(5))).toEqual(expect.arrayContaining([5, 6, 7, 8, 9]));
    expect(parts.flat().sort((a, b) => a - b)).toEqual(all);
    // without the goals' wording the same vectors and sequences stay one cluster
    const { wording: _, ...vectorsOnly } = loopRuns(withFailed, new Set([11]));
    expect(splitGoalDeterminedVariants(all, vectorsOnly, 3)).toEqual([all]);
  });

  it('a pass reads the wording of only the clusters whose variants differ in repeat counts or whose one variant could be two call shapes', () => {
    const tools = [
      ...Array.from({ length: 3 }, () => ['search', 'policies', 'policies']),
      ...Array.from({ length: 3 }, () => ['search', 'policies', 'policies', 'policies']),
      ...Array.from({ length: 3 }, () => ['search', 'policies']),
      ...Array.from({ length: 3 }, () => ['search', 'reviews']),
      ...Array.from({ length: 2 }, () => ['search', 'policies', 'policies', 'policies']),
      ...Array.from({ length: 3 }, () => ['search', 'reviews']),
    ];
    const procedures = new ProcedureTable(tools.map((sequence) => ({ tools: sequence })));
    const runs = { traceOf: (run: number) => procedures.traceOfRun[run]!, successful: () => true, toolsOf: (run: number) => tools[run]! };
    const counts = [0, 1, 2, 3, 4, 5];
    const otherTool = [6, 7, 8, 9, 10, 11];
    const oneVariant = [0, 1, 2, 12, 13];
    const oneVariantForTwo = [9, 10, 11, 14, 15, 16];
    expect(runsToWord([counts, otherTool, oneVariant, oneVariantForTwo], runs, 3)).toEqual([...counts, ...oneVariantForTwo]);
  });

  it('a loop over whatever a search returned, goals that state both counts, or variants that differ in a tool stay one cluster', () => {
    const unstated = [...asked(2, 'all the'), ...asked(3, 'all the')];
    const all = unstated.map((_, run) => run);
    expect(splitGoalDeterminedVariants(all, loopRuns(unstated), 3)).toEqual([all]);
    const both = [...asked(2, 'two or three'), ...asked(3, 'two or three')];
    expect(splitGoalDeterminedVariants(all, loopRuns(both), 3)).toEqual([all]);
    // a count stated in too few runs of a variant (4 of 5: under 0.9)
    const mostly = [
      ...asked(2, 'two'),
      ...asked(3, 'three').map((run, index) => (index === 0 ? { ...run, goal: 'Compare hotel policies in Oslo.' } : run)),
    ];
    expect(splitGoalDeterminedVariants(all, loopRuns(mostly), 3)).toEqual([all]);
    const withReviews = loopRuns([...asked(2, 'two'), ...asked(3, 'three')]);
    const reviewed: VariantRuns = {
      ...withReviews,
      wording: {
        ...withReviews.wording!,
        calls: (run) => [
          ...withReviews.wording!.calls(run),
          ...(run >= 5 ? [{ tool: 'Get_Hotel_Reviews', argumentNames: ['hotel_id'] }] : []),
        ],
      },
    };
    expect(splitGoalDeterminedVariants(all, reviewed, 3)).toEqual([all]);
  });
});

describe('a cluster of one procedure splits into the call shapes its goals decide (goal-determined-variants, call-shapes)', () => {
  const [digestDirection, boardDirection] = randomUnitVectors(2, dimension, 12);
  const tools = ['docs.search', 'docs.write', 'email.send'];

  /** Runs that all call `tools`, each with its own argument names on every step, and a goal vector. */
  function shapedRuns(runs: Array<{ goal: Float32Array; names: string[] }>): VariantRuns {
    const calls = runs.map(({ names }) => tools.map((tool) => ({ tool, argumentNames: names })));
    return {
      ...cluster(
        runs.map((run) => run.goal),
        runs.map(() => tools),
      ),
      wording: { goal: () => '', calls: (run) => calls[run]! },
    };
  }

  it('the same steps given arguments of other names, for goals that say another job, are two procedures', () => {
    const random = createSeededRandom(13);
    const runs = [
      ...Array.from({ length: 5 }, () => ({ goal: noisyNeighbour(random, digestDirection!, 0.9), names: ['region'] })),
      ...Array.from({ length: 5 }, () => ({ goal: noisyNeighbour(random, boardDirection!, 0.9), names: ['period'] })),
    ];
    const all = runs.map((_, run) => run);
    expect(splitGoalDeterminedVariants(all, shapedRuns(runs), 3)).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
    ]);
    // without the argument names the same runs are one procedure
    const { wording: _, ...toolsOnly } = shapedRuns(runs);
    expect(splitGoalDeterminedVariants(all, toolsOnly, 3)).toEqual([all]);
  });

  it('two runs of another shape for goals unlike the procedure’s are set apart from it, too few to be a procedure themselves', () => {
    const random = createSeededRandom(15);
    const runs = [
      ...Array.from({ length: 5 }, () => ({ goal: noisyNeighbour(random, digestDirection!, 0.9), names: ['region'] })),
      ...Array.from({ length: 2 }, () => ({ goal: noisyNeighbour(random, boardDirection!, 0.9), names: ['period'] })),
    ];
    expect(splitGoalDeterminedVariants([0, 1, 2, 3, 4, 5, 6], shapedRuns(runs), 3)).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6],
    ]);
    // a shape of two runs beside a group too small to be a procedure splits nothing
    expect(splitGoalDeterminedVariants([3, 4, 5, 6], shapedRuns(runs), 3)).toEqual([[3, 4, 5, 6]]);
  });

  it('an optional argument is no shape of its own, and shapes the goals do not predict stay one cluster', () => {
    const random = createSeededRandom(14);
    const optional = Array.from({ length: 10 }, (_, run) => ({
      goal: noisyNeighbour(random, run < 5 ? digestDirection! : boardDirection!, 0.9),
      names: run < 5 ? ['region'] : ['note', 'region'],
    }));
    const all = optional.map((_, run) => run);
    expect(splitGoalDeterminedVariants(all, shapedRuns(optional), 3)).toEqual([all]);
    const unpredicted = Array.from({ length: 10 }, (_, run) => ({
      goal: noisyNeighbour(random, digestDirection!, 0.9),
      names: run % 2 === 0 ? ['region'] : ['period'],
    }));
    expect(splitGoalDeterminedVariants(all, shapedRuns(unpredicted), 3)).toEqual([all]);
  });
});
