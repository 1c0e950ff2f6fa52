/**
 * Where each embedding model's goal-to-goal cosines lie, against the test model's: the first
 * `--goals` goals of each corpus embedded one at a time with each model (its pooling and goal
 * prefix, from its profile), every pair's cosine, and the cosine of each model at the quantiles
 * where the test model has 0.4 … 0.9 — the values a new model's τ and clustering cut start from
 * (bench/results/2026-12-04-default-model.md). Also how far a goal's vector moves when it is
 * embedded in a batch of 32 rather than alone (the dynamically quantized graphs' `oneTextPerRun`).
 *
 *   SKILLSMITH_MODEL_DIR=… node --import tsx bench/goal-cosine-scale.ts --corpus /tmp/nestful --corpus /tmp/generated [--goals 150]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfig } from '../src/app/config.ts';
import { taskPrefix } from '../src/embedding/embedder.ts';
import { MINILM_MODEL_ID, modelProfile } from '../src/embedding/model-profiles.ts';
import { packagedModels } from '../src/embedding/model-pull.ts';
import { jsonLines } from './corpus-files.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', multiple: true, default: [] },
    goals: { type: 'string', default: '150' },
    models: { type: 'string', default: [...packagedModels.keys()].join(',') },
  },
});
const perCorpus = Number(values.goals);
const goals = (
  await Promise.all(values.corpus.map((corpus) => jsonLines(join(corpus, 'runs.jsonl'), z.object({ goal: z.string() }).loose())))
).flatMap((runs) => runs.slice(0, perCorpus).map((run) => run.goal));

const transformers = await import('@huggingface/transformers');
transformers.env.allowLocalModels = true;
transformers.env.allowRemoteModels = false;
transformers.env.localModelPath = `${loadConfig().embedding.modelDir}/`;

const dot = (left: ArrayLike<number>, right: ArrayLike<number>) => {
  let sum = 0;
  for (let index = 0; index < left.length; index++) sum += left[index]! * right[index]!;
  return sum;
};
const quantile = (sorted: readonly number[], fraction: number) => sorted[Math.floor(fraction * (sorted.length - 1))]!;

const pairCosines = new Map<string, number[]>();
for (const modelId of values.models.split(',')) {
  const profile = modelProfile(modelId)!;
  const extractor = await transformers.pipeline('feature-extraction', modelId, { dtype: 'q8', device: 'cpu' });
  const texts = goals.map((goal) => taskPrefix(profile.prefixes, 'goal') + goal);
  const alone: Float32Array[] = [];
  for (const text of texts) alone.push((await extractor([text], { pooling: profile.pooling, normalize: true })).data as Float32Array);
  const batch = await extractor(texts.slice(0, 32), { pooling: profile.pooling, normalize: true });
  const moved = alone
    .slice(0, 32)
    .map((vector, row) => dot(vector, (batch.data as Float32Array).subarray(row * vector.length, (row + 1) * vector.length)))
    .sort((left, right) => left - right);
  const cosines: number[] = [];
  for (let left = 0; left < alone.length; left++)
    for (let right = left + 1; right < alone.length; right++) cosines.push(dot(alone[left]!, alone[right]!));
  cosines.sort((left, right) => left - right);
  pairCosines.set(modelId, cosines);
  console.log(
    `${modelId}: alone vs in a batch of 32, cosine min ${moved[0]!.toFixed(4)} median ${quantile(moved, 0.5).toFixed(4)}; ` +
      `pair cosines p10/p50/p90/p99 ${[0.1, 0.5, 0.9, 0.99].map((fraction) => quantile(cosines, fraction).toFixed(3)).join(' / ')}`,
  );
}
const reference = pairCosines.get(MINILM_MODEL_ID);
if (reference) {
  console.log(`\n| ${MINILM_MODEL_ID} | quantile | ${[...pairCosines.keys()].join(' | ')} |`);
  for (const value of [0.4, 0.5, 0.6, 0.7, 0.82, 0.9]) {
    const fraction = reference.findIndex((cosine) => cosine >= value) / reference.length;
    console.log(
      `| ${value} | ${fraction.toFixed(4)} | ${[...pairCosines.values()].map((cosines) => quantile(cosines, fraction).toFixed(3)).join(' | ')} |`,
    );
  }
}
