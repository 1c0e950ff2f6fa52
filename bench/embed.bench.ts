/**
 * Embedding benchmark: goals/s of our embedder (transformers.js feature-extraction pipeline,
 * mean pooling, L2 normalisation) on the registry-shipped test model, at batch sizes 1/16/64,
 * against a raw onnxruntime-node InferenceSession on the same ONNX file doing the same work
 * (same tokenizer, session.run, mean pooling and normalisation in plain JS), and the raw
 * session.run alone on pre-tokenised input.
 *
 *   node --import tsx bench/embed.bench.ts [--goals 256] [--batches 1,16,64] [--repeat 3]
 *
 * Each figure is the best of `--repeat` passes over the goals (the paths alternate, so
 * neither gets a systematically warmer machine).
 *
 * Needs the test model: node bin/skillsmith.js models pull
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AutoTokenizer, env } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { testEmbeddingModel } from '../src/embedding/model-pull.ts';
import { generateRuns } from '../src/demo/synthetic-runs.ts';
import { requireTestModel, testModelDir, testModelSettings } from '../test/support/test-model.ts';

const { values } = parseArgs({
  options: {
    goals: { type: 'string', default: '256' },
    batches: { type: 'string', default: '1,16,64' },
    repeat: { type: 'string', default: '3' },
  },
});

interface Encoded {
  input_ids: { data: BigInt64Array; dims: number[] };
  attention_mask: { data: BigInt64Array; dims: number[] };
  token_type_ids?: { data: BigInt64Array; dims: number[] };
}

function meanPoolNormalise(hidden: Float32Array, mask: BigInt64Array, batch: number, tokens: number, width: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const vector = new Float32Array(width);
    let count = 0;
    for (let t = 0; t < tokens; t++) {
      if (mask[b * tokens + t] === 0n) continue;
      count++;
      const offset = (b * tokens + t) * width;
      for (let k = 0; k < width; k++) vector[k]! += hidden[offset + k]!;
    }
    let norm = 0;
    for (let k = 0; k < width; k++) {
      vector[k]! /= Math.max(count, 1);
      norm += vector[k]! * vector[k]!;
    }
    norm = Math.sqrt(norm) || 1;
    for (let k = 0; k < width; k++) vector[k]! /= norm;
    out.push(vector);
  }
  return out;
}

async function main(): Promise<void> {
  await requireTestModel();
  const goalCount = Number(values.goals);
  const batchSizes = values.batches.split(',').map(Number);
  const goals = generateRuns({ seed: 5, runs: goalCount }).map((run) => run.report.goal);
  const modelPath = join(testModelDir, testEmbeddingModel.modelId);
  env.localModelPath = `${testModelDir}/`;
  env.allowRemoteModels = false;
  const tokenizer = await AutoTokenizer.from_pretrained(testEmbeddingModel.modelId, { local_files_only: true });
  const session = await ort.InferenceSession.create(join(modelPath, 'onnx', 'model_quantized.onnx'));

  const toOrt = (encoded: Encoded) => {
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', encoded.input_ids.data, encoded.input_ids.dims),
      attention_mask: new ort.Tensor('int64', encoded.attention_mask.data, encoded.attention_mask.dims),
    };
    if (session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new ort.Tensor(
        'int64',
        encoded.token_type_ids?.data ?? new BigInt64Array(encoded.input_ids.data.length),
        encoded.input_ids.dims,
      );
    }
    return feeds;
  };
  const rawEmbed = async (texts: string[]) => {
    const encoded = (await tokenizer(texts, { padding: true, truncation: true })) as unknown as Encoded;
    const [batch, tokens] = encoded.input_ids.dims as [number, number];
    const output = await session.run(toOrt(encoded));
    const hidden = output.last_hidden_state!;
    return meanPoolNormalise(hidden.data as Float32Array, encoded.attention_mask.data, batch, tokens, hidden.dims[2]!);
  };

  console.log(
    `# embedding: ${testEmbeddingModel.modelId} (int8 ONNX, ${testEmbeddingModel.dimension}-d), ${goalCount} generated goals, ` +
      `${availableParallelism()} cores, node ${process.version}, onnxruntime-node ${ort.env.versions.common}`,
  );
  console.log('| batch | ours: goals/s | raw ORT (tokenise + run + pool): goals/s | ours / raw | raw session.run only: goals/s |');
  console.log('|---|---|---|---|---|');
  for (const batchSize of batchSizes) {
    const embedder = await createEmbedder(testModelSettings({ batchSize }));
    const batches: string[][] = [];
    for (let start = 0; start < goals.length; start += batchSize) batches.push(goals.slice(start, start + batchSize));
    // Warm both paths.
    await embedder.embed(batches[0]!, 'goal');
    await rawEmbed(batches[0]!);

    let ours: Float32Array[] = [];
    let raw: Float32Array[] = [];
    let oursRate = 0;
    let rawRate = 0;
    for (let pass = 0; pass < Number(values.repeat); pass++) {
      let started = performance.now();
      ours = await embedder.embed(goals, 'goal');
      oursRate = Math.max(oursRate, goals.length / ((performance.now() - started) / 1000));
      started = performance.now();
      raw = [];
      for (const batch of batches) raw.push(...(await rawEmbed(batch)));
      rawRate = Math.max(rawRate, goals.length / ((performance.now() - started) / 1000));
    }

    const encodedBatches = await Promise.all(
      batches.map(async (batch) => toOrt((await tokenizer(batch, { padding: true, truncation: true })) as unknown as Encoded)),
    );
    let runOnlyRate = 0;
    for (let pass = 0; pass < Number(values.repeat); pass++) {
      const started = performance.now();
      for (const feeds of encodedBatches) await session.run(feeds);
      runOnlyRate = Math.max(runOnlyRate, goals.length / ((performance.now() - started) / 1000));
    }

    // Same vectors either way (a sanity check, not a figure).
    let worst = 1;
    ours.forEach((vector, index) => {
      let similarity = 0;
      for (let k = 0; k < vector.length; k++) similarity += vector[k]! * raw[index]![k]!;
      worst = Math.min(worst, similarity);
    });
    if (worst < 0.999) throw new Error(`ours and raw vectors differ (min cosine ${worst})`);
    console.log(
      `| ${batchSize} | ${oursRate.toFixed(0)} | ${rawRate.toFixed(0)} | ${(oursRate / rawRate).toFixed(2)} | ${runOnlyRate.toFixed(0)} |`,
    );
  }
}

await main();
