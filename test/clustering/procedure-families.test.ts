import { describe, expect, it } from 'vitest';
import { clusterRuns } from '../../src/clustering/cluster-goals.ts';
import { splitClustersByGoalDeterminedVariants } from '../../src/clustering/goal-determined-variants.ts';
import { procedureTableFor, runSimilarity } from '../../src/clustering/run-similarity.ts';
import { ProcedureTable, traceOfRun, type ProcedureTrace } from '../../src/clustering/tool-sequence-similarity.ts';
import { clusteringDefaultsFor } from '../../src/app/config.ts';
import { createSeededRandom } from '../../src/clustering/seeded-random.ts';
import { testEmbeddingModel } from '../../src/embedding/model-pull.ts';
import { noisyNeighbour, randomUnitVectors } from '../support/synthetic-vectors.ts';

/**
 * Generated families of runs: each family pursues one kind of goal (its goal vectors are
 * paraphrases: noisy copies of a family direction, pairwise cosine ≈ 0.75, within the range MiniLM gives
 * real paraphrases) by one procedure, with an optional step some runs take and calls some runs
 * retry after a failure. (Runs that failed part-way are left out of this exact property: one that
 * skipped the optional step and stopped a step early has half a 4-step procedure, and may stand
 * alone — bench/results/2026-12-01-procedure-aware-clustering.md.) A decoy family reads like its twin (paraphrases of
 * the same direction) but does the job by other tools. The goal signal is vectors, not text: what
 * is under test is the clustering's rule, not the embedder (bench/results/ measures that on text).
 */
const dimension = 48;
const vocabulary = Array.from({ length: 60 }, (_, index) => `service${index % 12}.operation_${index}`);

interface Family {
  direction: Float32Array;
  steps: string[];
  /** Index in `steps` of the step only some runs take. */
  optionalStep: number;
}

function generate(seed: number, familyCount: number, decoyCount: number) {
  const random = createSeededRandom(seed);
  const unused = random.shuffle(vocabulary);
  const takeSteps = (count: number) => unused.splice(0, count);
  const families: Family[] = [];
  for (let index = 0; index < familyCount; index++) {
    const steps = takeSteps(random.integer(4, 6));
    families.push({
      direction: randomUnitVectors(1, dimension, random.integer(1, 2 ** 31 - 1))[0]!,
      steps,
      optionalStep: random.integer(1, steps.length - 1),
    });
  }
  // A decoy: the same kind of goal as an earlier family, another procedure.
  for (let index = 0; index < decoyCount; index++) {
    const steps = takeSteps(random.integer(4, 6));
    families.push({ direction: families[index]!.direction, steps, optionalStep: random.integer(1, steps.length - 1) });
  }
  const vectors: Float32Array[] = [];
  const traces: ProcedureTrace[] = [];
  const labels: number[] = [];
  families.forEach((family, label) => {
    const runs = random.integer(4, 9);
    for (let run = 0; run < runs; run++) {
      const calls = family.steps
        .filter((_, step) => step !== family.optionalStep || random.chance(0.5))
        .flatMap((tool) =>
          random.chance(0.15)
            ? [
                { tool, success: false },
                { tool, success: true },
              ]
            : [{ tool, success: true }],
        );
      // A paraphrase: cosine 0.87 to the family's direction, so two paraphrases meet at ≈ 0.75.
      vectors.push(noisyNeighbour(random, family.direction, 0.87));
      traces.push(traceOfRun({ toolCalls: calls }));
      labels.push(label);
    }
  });
  return { vectors, traces, labels };
}

function partitionOf(count: number, clusters: number[][]): string {
  const parts = clusters.map((cluster) => [...cluster].sort((a, b) => a - b));
  const covered = new Set(parts.flat());
  for (let index = 0; index < count; index++) if (!covered.has(index)) parts.push([index]);
  return JSON.stringify(parts.sort((a, b) => a[0]! - b[0]!));
}

describe('procedure-aware clustering recovers generated families (property)', () => {
  const defaults = clusteringDefaultsFor(testEmbeddingModel.modelId);

  it(`with the ${testEmbeddingModel.modelId} defaults (${defaults.similarity}), families with paraphrases, optional steps and retries cluster into exactly their families, decoys apart`, async () => {
    const { default: fc } = await import('fast-check');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 1, max: 2 }),
        async (seed, familyCount, decoyCount) => {
          const { vectors, traces, labels } = generate(seed, familyCount, decoyCount);
          const similarity = runSimilarity(vectors, procedureTableFor(traces, defaults.similarity, 3), {
            design: defaults.similarity,
            goalTau: 0.5,
            clusterTau: defaults.clusterTau,
            toolTau: defaults.toolTau,
            goalWeight: defaults.goalWeight,
          });
          const { clusters } = await clusterRuns(vectors, similarity, { linkage: 'average' });
          const families = [...new Set(labels)].map((label) => labels.flatMap((runLabel, index) => (runLabel === label ? [index] : [])));
          expect(partitionOf(labels.length, clusters)).toBe(partitionOf(labels.length, families));
          // The optional step is taken whatever the paraphrase: the goals do not decide it, so no family is split by it.
          const procedures = new ProcedureTable(traces);
          const split = splitClustersByGoalDeterminedVariants(
            clusters,
            { vectors, traceOf: (run) => procedures.traceOfRun[run]!, successful: () => true, distance: similarity.distance },
            3,
          );
          expect(partitionOf(labels.length, split)).toBe(partitionOf(labels.length, families));
        },
      ),
      { numRuns: 100, seed: 20261201 },
    );
  });

  it('goal similarity alone merges each decoy with its twin (the failure the tool signal fixes)', async () => {
    const { vectors, labels } = generate(7, 3, 2);
    const goalOnly = runSimilarity(vectors, new ProcedureTable(vectors.map(() => ({ tools: [] }))), {
      design: 'goal',
      goalTau: 0.5,
      clusterTau: 0,
      toolTau: 0,
      goalWeight: 0,
    });
    const { clusters } = await clusterRuns(vectors, goalOnly, { linkage: 'average' });
    const twinOfDecoy = (label: number) => clusters.find((cluster) => cluster.some((index) => labels[index] === label));
    expect(twinOfDecoy(3)!.some((index) => labels[index] === 0)).toBe(true);
    expect(twinOfDecoy(4)!.some((index) => labels[index] === 1)).toBe(true);
  });
});
