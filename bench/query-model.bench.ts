/**
 * Two ONNX files of one checkpoint side by side, for a recall's query embedding: what each costs
 * per query and how far apart their vectors are. Made to compare the weight-only int8 MiniLM the
 * project shipped first (fp32 kernels) with Xenova's dynamically quantized export (MatMulInteger
 * kernels); any two models laid out under one model directory work.
 *
 * 1. `session.run` alone, single-threaded and not spinning (the embedder's query session), on
 *    fixed token counts: wall p50/p99 and CPU per run, the models alternating round by round.
 * 2. The embedder's query path (`embed([goal], 'query')`: tokenizer, run, pooling) over distinct
 *    goals of a corpus, the models alternating goal by goal: wall p50/p99 and CPU per call.
 * 3. Agreement on `--cosine-goals` distinct goals, embedded by both: the cosine between the two
 *    models' vectors of each goal, how much every goal-to-goal cosine moves from one model to the
 *    other (what τ and the recall threshold are calibrated on), and how often a goal's nearest
 *    other goal is the same under both.
 * 4. Batch dependence, for each model: the cosine between a goal's vector computed alone and in a
 *    batch of 32 (transformers.js' pipeline directly, as the embedder would batch a pass without
 *    the profile's `oneTextPerRun`), and CPU per goal either way.
 *
 *   node --import tsx bench/query-model.bench.ts [--models A,B] [--model-dir DIR] [--goals runs.jsonl]
 *     [--tokens 3,12,24] [--runs 300] [--repeat 3] [--calls 600] [--cosine-goals 500]
 *
 * `--goals` is a runs JSONL (default /tmp/learn-generated/runs.jsonl, written by
 * `npx tsx bench/corpora/generated.ts --out /tmp/learn-generated`). Needs both models pulled:
 * `node bin/skillsmith.js models pull --model …` for each.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { env, pipeline } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import { createEmbedder, type Embedder } from '../src/embedding/embedder.ts';
import { MINILM_MODEL_ID, MINILM_XENOVA_MODEL_ID, modelProfile } from '../src/embedding/model-profiles.ts';
import { testModelDir } from '../test/support/test-model.ts';
import { percentile, summarize } from './session-bench-setup.ts';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: `${MINILM_MODEL_ID},${MINILM_XENOVA_MODEL_ID}` },
    'model-dir': { type: 'string', default: testModelDir },
    goals: { type: 'string', default: '/tmp/learn-generated/runs.jsonl' },
    tokens: { type: 'string', default: '3,12,24' },
    runs: { type: 'string', default: '300' },
    repeat: { type: 'string', default: '3' },
    calls: { type: 'string', default: '600' },
    'cosine-goals': { type: 'string', default: '500' },
  },
});
const modelDir = resolve(values['model-dir']);
const modelIds = values.models.split(',');
const load = () => loadavg()[0]!.toFixed(1);
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
const fixed = (value: number) => value.toFixed(2);

const goals = [
  ...new Set(
    (await readFile(values.goals, 'utf8'))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => (JSON.parse(line) as { goal: string }).goal),
  ),
];
console.log(`${goals.length} distinct goals from ${values.goals}; models under ${modelDir}; load ${load()}`);

// 1. session.run alone.
const noSpinning = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
const sessions = await Promise.all(
  modelIds.map(async (modelId) => ({
    modelId,
    session: await ort.InferenceSession.create(join(modelDir, modelId, 'onnx', 'model_quantized.onnx'), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      extra: noSpinning,
    }),
  })),
);
const feedsFor = (tokens: number) => {
  const ids = BigInt64Array.from({ length: tokens }, (_, index) =>
    index === 0 ? 101n : index === tokens - 1 ? 102n : BigInt(2000 + index),
  );
  return {
    input_ids: new ort.Tensor('int64', ids, [1, tokens]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(tokens).fill(1n), [1, tokens]),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(tokens), [1, tokens]),
  };
};
console.log('\nsession.run, 1 intra-op thread, spinning off:');
for (const tokens of values.tokens.split(',').map(Number)) {
  const feeds = feedsFor(tokens);
  for (const { session } of sessions) for (let index = 0; index < 30; index++) await session.run(feeds);
  for (let round = 1; round <= Number(values.repeat); round++) {
    for (const { modelId, session } of sessions) {
      const wall: number[] = [];
      const before = process.cpuUsage();
      for (let index = 0; index < Number(values.runs); index++) {
        const started = performance.now();
        await session.run(feeds);
        wall.push(performance.now() - started);
      }
      const cpu = cpuMs(process.cpuUsage(before)) / Number(values.runs);
      const { p50, p99 } = summarize(wall);
      console.log(
        `  ${tokens} tokens, round ${round}, load ${load()}, ${modelId}: wall p50 ${fixed(p50)} / p99 ${fixed(p99)} ms, CPU ${fixed(cpu)} ms per run`,
      );
    }
  }
}
await Promise.all(sessions.map(({ session }) => session.release()));

// 2. The embedder's query path, goal by goal.
const embedders: Embedder[] = [];
for (const modelId of modelIds) {
  const profile = modelProfile(modelId);
  embedders.push(
    await createEmbedder({
      model: modelId,
      modelDir,
      allowRemoteModels: false,
      pooling: profile?.pooling ?? 'mean',
      prefixes: profile?.prefixes ?? 'none',
      dimension: undefined,
      batchSize: 32,
    }),
  );
}
for (const embedder of embedders) for (const goal of goals.slice(0, 20)) await embedder.embed([goal], 'query');
const calls = Math.min(Number(values.calls), goals.length);
const walls = embedders.map(() => [] as number[]);
const cpus = embedders.map(() => 0);
const loadBefore = load();
for (const goal of goals.slice(0, calls)) {
  for (const [index, embedder] of embedders.entries()) {
    const before = process.cpuUsage();
    const started = performance.now();
    await embedder.embed([goal], 'query');
    walls[index]!.push(performance.now() - started);
    cpus[index]! += cpuMs(process.cpuUsage(before));
  }
}
console.log(`\nembed([goal], 'query') over ${calls} distinct goals, alternating, load ${loadBefore} → ${load()}:`);
for (const [index, modelId] of modelIds.entries()) {
  const { p50, p99 } = summarize(walls[index]!);
  console.log(`  ${modelId}: wall p50 ${fixed(p50)} / p99 ${fixed(p99)} ms, CPU ${fixed(cpus[index]! / calls)} ms per call`);
}

// 3. Agreement of the two models' vectors (the first two models given).
if (embedders.length >= 2) {
  const sample = goals.slice(0, Number(values['cosine-goals']));
  const [left, right] = [await embedders[0]!.embed(sample, 'goal'), await embedders[1]!.embed(sample, 'goal')];
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);
  const same = sample.map((_, index) => dot(left[index]!, right[index]!));
  const moved: number[] = [];
  let sameNeighbour = 0;
  for (let i = 0; i < sample.length; i++) {
    let best = [-2, -1, -2, -1];
    for (let j = 0; j < sample.length; j++) {
      if (i === j) continue;
      const [a, b] = [dot(left[i]!, left[j]!), dot(right[i]!, right[j]!)];
      if (j > i) moved.push(Math.abs(a - b));
      if (a > best[0]!) best = [a, j, best[2]!, best[3]!];
      if (b > best[2]!) best = [best[0]!, best[1]!, b, j];
    }
    if (best[1] === best[3]) sameNeighbour++;
  }
  const q = (samples: number[], fraction: number) => percentile(samples, fraction).toFixed(4);
  console.log(`\nagreement of ${modelIds[0]} and ${modelIds[1]} on ${sample.length} distinct goals:`);
  console.log(
    `  cosine of a goal's two vectors: min ${q(same, 0)}, p1 ${q(same, 0.01)}, p5 ${q(same, 0.05)}, p50 ${q(same, 0.5)}, ` +
      `mean ${(same.reduce((sum, value) => sum + value, 0) / same.length).toFixed(4)}`,
  );
  console.log(
    `  |Δ cosine| of ${moved.length} goal pairs between the models: p50 ${q(moved, 0.5)}, p99 ${q(moved, 0.99)}, max ${q(moved, 1)}, ` +
      `mean ${(moved.reduce((sum, value) => sum + value, 0) / moved.length).toFixed(4)}`,
  );
  console.log(`  nearest other goal the same under both: ${sameNeighbour} / ${sample.length}`);
}

// 4. A goal alone and in a batch of 32, per model, on the pipeline itself (no oneTextPerRun).
console.log(`\na goal alone vs in a batch of 32 (${Math.min(goals.length, 320)} goals, transformers.js pipeline, default threads):`);
const batchGoals = goals.slice(0, 320);
env.localModelPath = `${modelDir}/`;
env.allowRemoteModels = false;
for (const modelId of modelIds) {
  const extract = await pipeline('feature-extraction', modelId, {
    dtype: 'q8',
    device: 'cpu',
    session_options: { extra: noSpinning },
  });
  const options = { pooling: modelProfile(modelId)?.pooling ?? 'mean', normalize: true } as const;
  const rows = async (texts: string[]) => {
    const output = await extract(texts, options);
    return texts.map((_, row) => (output.data as Float32Array).slice(row * 384, (row + 1) * 384));
  };
  let before = process.cpuUsage();
  const batched: Float32Array[] = [];
  for (let start = 0; start < batchGoals.length; start += 32) batched.push(...(await rows(batchGoals.slice(start, start + 32))));
  const batchedCpu = cpuMs(process.cpuUsage(before)) / batchGoals.length;
  before = process.cpuUsage();
  const alone: Float32Array[] = [];
  for (const goal of batchGoals) alone.push(...(await rows([goal])));
  const aloneCpu = cpuMs(process.cpuUsage(before)) / batchGoals.length;
  const cosines = batchGoals.map((_, index) => alone[index]!.reduce((sum, value, k) => sum + value * batched[index]![k]!, 0));
  console.log(
    `  ${modelId}, load ${load()}: cosine alone/batched min ${percentile(cosines, 0).toFixed(5)}, p1 ${percentile(cosines, 0.01).toFixed(5)}, ` +
      `p50 ${percentile(cosines, 0.5).toFixed(5)}; CPU per goal batched ${fixed(batchedCpu)} ms, alone ${fixed(aloneCpu)} ms`,
  );
  await extract.dispose();
}
