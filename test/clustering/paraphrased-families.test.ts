import { describe, expect, it } from 'vitest';
import { clusteringDefaultsFor } from '../../src/app/config.ts';
import { clusterRuns } from '../../src/clustering/cluster-goals.ts';
import { procedureTableFor, runSimilarity } from '../../src/clustering/run-similarity.ts';
import { createSeededRandom } from '../../src/clustering/seeded-random.ts';
import { traceOfRun, type ProcedureTrace } from '../../src/clustering/tool-sequence-similarity.ts';
import { testEmbeddingModel } from '../../src/embedding/model-pull.ts';
import { noisyNeighbour, randomUnitVectors } from '../support/synthetic-vectors.ts';

/**
 * Issue #29 item 1, as a property over generated tenants: small families (3–5 runs) whose goals
 * are paraphrases sharing few words — goal vectors at cosine ≈ 0.65 to the family’s direction, so
 * two of them meet at ≈ 0.42, where goal wording alone joins nothing — each doing its job by a
 * distinctive procedure (tools no other family calls), some runs with an optional step of a
 * common tool and retried calls; beside them, jobs that share one procedure made of tools every
 * team calls (search, write, send), told apart only by their goals (paraphrases at ≈ 0.75 within
 * a job, unrelated directions across jobs). The goal signal is vectors, not text: what is under
 * test is the clustering's rule (bench/results/ measures it on text). Tenants of 6–15 families, so
 * that the common tools are common; a tenant of a few runs has its own case below.
 */
// MiniLM's dimension: the spread of paraphrase cosines around their mean shrinks with it as it does for real embeddings.
const dimension = 384;
const COMMON_TOOLS = ['web.search', 'docs.write', 'email.send'];

function generate(seed: number, familyCount: number, jobCount: number) {
  const random = createSeededRandom(seed);
  const vectors: Float32Array[] = [];
  const traces: ProcedureTrace[] = [];
  const labels: string[] = [];
  const directions = randomUnitVectors(familyCount + jobCount, dimension, seed);
  for (let family = 0; family < familyCount; family++) {
    const steps = Array.from({ length: random.integer(4, 5) }, (_, step) => `system${family}.step_${step}`);
    const runs = random.integer(3, 5);
    for (let run = 0; run < runs; run++) {
      const tools = random.chance(0.5) ? [...steps, random.pick(COMMON_TOOLS)] : steps;
      const calls = tools.flatMap((tool) =>
        random.chance(0.1)
          ? [
              { tool, success: false },
              { tool, success: true },
            ]
          : [{ tool, success: true }],
      );
      vectors.push(noisyNeighbour(random, directions[family]!, 0.65));
      traces.push(traceOfRun({ toolCalls: calls }));
      labels.push(`family-${family}`);
    }
  }
  for (let job = 0; job < jobCount; job++) {
    const runs = random.integer(3, 5);
    for (let run = 0; run < runs; run++) {
      vectors.push(noisyNeighbour(random, directions[familyCount + job]!, 0.87));
      traces.push(traceOfRun({ toolCalls: COMMON_TOOLS.map((tool) => ({ tool, success: true })) }));
      labels.push(`job-${job}`);
    }
  }
  return { vectors, traces, labels };
}

describe('paraphrased families (issue #29 item 1, property)', () => {
  const defaults = clusteringDefaultsFor(testEmbeddingModel.modelId);
  const settings = {
    design: defaults.similarity,
    goalTau: 0.5,
    clusterTau: defaults.clusterTau,
    toolTau: defaults.toolTau,
    goalWeight: defaults.goalWeight,
  };

  it(`with the ${testEmbeddingModel.modelId} defaults (${defaults.similarity}), each family of 3–5 paraphrased runs with a distinctive procedure is one whole cluster, and jobs sharing a common procedure stay apart`, async () => {
    const { default: fc } = await import('fast-check');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 6, max: 15 }),
        fc.integer({ min: 2, max: 4 }),
        async (seed, familyCount, jobCount) => {
          const { vectors, traces, labels } = generate(seed, familyCount, jobCount);
          const similarity = runSimilarity(vectors, procedureTableFor(traces, settings.design, 3), settings);
          const { clusters } = await clusterRuns(vectors, similarity, { linkage: 'average' });
          const clusterOf = new Map(clusters.flatMap((cluster, index) => cluster.map((run): [number, number] => [run, index])));
          for (const label of new Set(labels)) {
            const members = labels.flatMap((runLabel, run) => (runLabel === label ? [run] : []));
            const holding = new Set(members.map((run) => clusterOf.get(run)));
            if (label.startsWith('family-')) {
              // Whole: every run in one cluster, and that cluster holds nothing else.
              expect(holding.size, `${label} split`).toBe(1);
              expect(holding.has(undefined), `${label} has a run alone`).toBe(false);
              expect(clusters[[...holding][0]!]!.length).toBe(members.length);
            } else {
              // Apart: no cluster holds this job's runs and another label's.
              for (const index of holding) {
                if (index === undefined) continue;
                expect(new Set(clusters[index]!.map((run) => labels[run])).size, `${label} mixed`).toBe(1);
              }
            }
          }
        },
      ),
      { numRuns: 100, seed: 20261204 },
    );
  });

  it("a new tenant's first runs: 9 runs of one 3-step procedure whose goals share few words are one cluster", async () => {
    const random = createSeededRandom(9);
    const [direction] = randomUnitVectors(1, dimension, 9);
    const vectors = Array.from({ length: 9 }, () => noisyNeighbour(random, direction!, 0.65));
    const traces = vectors.map(() =>
      traceOfRun({ toolCalls: ['search_issues', 'create_issue', 'add_labels'].map((tool) => ({ tool, success: true })) }),
    );
    const similarity = runSimilarity(vectors, procedureTableFor(traces, settings.design, 3), settings);
    const { clusters } = await clusterRuns(vectors, similarity, { linkage: 'average' });
    expect(clusters).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8]]);
  });

  it('the `mix` design, blind to how distinctive a procedure is, leaves such families apart (what the rarity weighting fixes)', async () => {
    const { vectors, traces, labels } = generate(11, 8, 2);
    const mix = runSimilarity(vectors, procedureTableFor(traces, 'mix', 3), {
      ...settings,
      design: 'mix',
      clusterTau: 0.7,
      goalWeight: 0.5,
    });
    const { clusters } = await clusterRuns(vectors, mix, { linkage: 'average' });
    const whole = [...new Set(labels)]
      .filter((label) => label.startsWith('family-'))
      .filter((label) =>
        clusters.some(
          (cluster) => cluster.length === labels.filter((other) => other === label).length && cluster.every((run) => labels[run] === label),
        ),
      );
    expect(whole.length).toBeLessThan(8);
  });
});
