/**
 * Linkage choice: how well each linkage and τ recover the task families of a labelled
 * paraphrase corpus — the seeded synthetic-runs generator (src/demo/synthetic-runs.ts)'s goals (each run labelled with its task
 * family; one-off distractor goals each their own label), embedded with the test model.
 * Prints adjusted Rand index (ARI) and V-measure (with homogeneity / completeness) per
 * linkage and τ; runs left alone at the cut count as their own clusters.
 *
 *   node --import tsx bench/linkage-choice.bench.ts [--runs 1500] [--seed 9]
 *
 * Needs the test model: node bin/skillsmith.js models pull
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { clusterVectors, type ClusterLinkage } from '../src/clustering/cluster-goals.ts';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { testEmbeddingModel } from '../src/embedding/model-pull.ts';
import { generateRuns, TASK_FAMILIES } from '../src/demo/synthetic-runs.ts';
import { requireTestModel, testModelSettings } from '../test/support/test-model.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1500' },
    seed: { type: 'string', default: '9' },
    taus: { type: 'string', default: '0.6,0.65,0.7,0.75,0.8,0.82,0.85,0.9' },
  },
});

function choose2(count: number): number {
  return (count * (count - 1)) / 2;
}

/** Contingency counts between two labelings of the same items. */
function contingency(truth: number[], predicted: number[]) {
  const table = new Map<string, number>();
  const truthCounts = new Map<number, number>();
  const predictedCounts = new Map<number, number>();
  truth.forEach((label, index) => {
    const cluster = predicted[index]!;
    const key = `${label}:${cluster}`;
    table.set(key, (table.get(key) ?? 0) + 1);
    truthCounts.set(label, (truthCounts.get(label) ?? 0) + 1);
    predictedCounts.set(cluster, (predictedCounts.get(cluster) ?? 0) + 1);
  });
  return { table, truthCounts, predictedCounts, n: truth.length };
}

function adjustedRandIndex(truth: number[], predicted: number[]): number {
  const { table, truthCounts, predictedCounts, n } = contingency(truth, predicted);
  const index = [...table.values()].reduce((sum, count) => sum + choose2(count), 0);
  const truthPairs = [...truthCounts.values()].reduce((sum, count) => sum + choose2(count), 0);
  const predictedPairs = [...predictedCounts.values()].reduce((sum, count) => sum + choose2(count), 0);
  const expected = (truthPairs * predictedPairs) / choose2(n);
  const maximum = (truthPairs + predictedPairs) / 2;
  return maximum === expected ? 1 : (index - expected) / (maximum - expected);
}

function entropy(counts: Iterable<number>, n: number): number {
  let h = 0;
  for (const count of counts) if (count > 0) h -= (count / n) * Math.log(count / n);
  return h;
}

function vMeasure(truth: number[], predicted: number[]) {
  const { table, truthCounts, predictedCounts, n } = contingency(truth, predicted);
  const hTruth = entropy(truthCounts.values(), n);
  const hPredicted = entropy(predictedCounts.values(), n);
  let hTruthGivenPredicted = 0;
  let hPredictedGivenTruth = 0;
  for (const [key, count] of table) {
    const [label, cluster] = key.split(':').map(Number) as [number, number];
    hTruthGivenPredicted -= (count / n) * Math.log(count / predictedCounts.get(cluster)!);
    hPredictedGivenTruth -= (count / n) * Math.log(count / truthCounts.get(label)!);
  }
  const homogeneity = hTruth === 0 ? 1 : 1 - hTruthGivenPredicted / hTruth;
  const completeness = hPredicted === 0 ? 1 : 1 - hPredictedGivenTruth / hPredicted;
  const v = homogeneity + completeness === 0 ? 0 : (2 * homogeneity * completeness) / (homogeneity + completeness);
  return { homogeneity, completeness, v };
}

async function main(): Promise<void> {
  await requireTestModel();
  const runs = generateRuns({ seed: Number(values.seed), runs: Number(values.runs) });
  const familyIds = new Map(TASK_FAMILIES.map((family, index) => [family.id, index]));
  let nextDistractor = familyIds.size;
  const truth = runs.map((run) => (run.family === null ? nextDistractor++ : familyIds.get(run.family)!));
  const embedder = await createEmbedder(testModelSettings({ batchSize: 64 }));
  const started = performance.now();
  const vectors = await embedder.embed(
    runs.map((run) => run.report.goal),
    'goal',
  );
  const embedSeconds = (performance.now() - started) / 1000;
  console.log(
    `# linkage choice: ${runs.length} generated goals (${TASK_FAMILIES.length} task families, ` +
      `${nextDistractor - familyIds.size} one-off distractors, seed ${values.seed}), ${testEmbeddingModel.modelId}; ` +
      `embedded in ${embedSeconds.toFixed(1)} s on ${availableParallelism()} cores`,
  );
  console.log('| linkage | τ | clusters (≥2) | alone | ARI | V-measure | homogeneity | completeness |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const linkage of ['average', 'complete', 'single'] as ClusterLinkage[]) {
    for (const similarityTau of values.taus.split(',').map(Number)) {
      const clustering = await clusterVectors(vectors, { similarityTau, linkage });
      const predicted = new Array<number>(vectors.length);
      let next = 0;
      for (const cluster of clustering.clusters) {
        for (const index of cluster) predicted[index] = next;
        next++;
      }
      for (let index = 0; index < predicted.length; index++) if (predicted[index] === undefined) predicted[index] = next++;
      const ari = adjustedRandIndex(truth, predicted);
      const { v, homogeneity, completeness } = vMeasure(truth, predicted);
      console.log(
        `| ${linkage} | ${similarityTau} | ${clustering.clusters.length} | ${clustering.singletonCount} | ` +
          `${ari.toFixed(3)} | ${v.toFixed(3)} | ${homogeneity.toFixed(3)} | ${completeness.toFixed(3)} |`,
      );
    }
  }
}

await main();
