/**
 * The query embedding's `session.run` alone (one ~12-token goal, what a recall embeds) on the
 * registry-shipped model: wall p50/p99 and CPU per run for intra-op thread counts, the sessions
 * alternating so that neither gets a systematically quieter machine. Sessions are built as the
 * embedder builds them (spinning off). `--model` takes another ONNX file of the same graph (e.g.
 * the weights dequantized offline) to compare kernels.
 *
 *   node --import tsx bench/query-session.bench.ts [--threads 1,2] [--tokens 12] [--runs 400] [--repeat 2] [--model FILE]
 *
 * Needs the test model: node bin/skillsmith.js models pull
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import { testEmbeddingModel } from '../src/embedding/model-pull.ts';
import { requireTestModel, testModelDir } from '../test/support/test-model.ts';
import { summarize } from './session-bench-setup.ts';

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1,2' },
    tokens: { type: 'string', default: '12' },
    runs: { type: 'string', default: '400' },
    repeat: { type: 'string', default: '2' },
    model: { type: 'string' },
  },
});
await requireTestModel();
const file = values.model ?? join(testModelDir, testEmbeddingModel.modelId, 'onnx', 'model_quantized.onnx');
const tokens = Number(values.tokens);
const runs = Number(values.runs);

const ids = BigInt64Array.from({ length: tokens }, (_, index) => (index === 0 ? 101n : index === tokens - 1 ? 102n : BigInt(2000 + index)));
const feeds = {
  input_ids: new ort.Tensor('int64', ids, [1, tokens]),
  attention_mask: new ort.Tensor('int64', new BigInt64Array(tokens).fill(1n), [1, tokens]),
  token_type_ids: new ort.Tensor('int64', new BigInt64Array(tokens), [1, tokens]),
};
const noSpinning = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
const sessions = await Promise.all(
  values.threads.split(',').map(async (threads) => ({
    threads: Number(threads),
    session: await ort.InferenceSession.create(file, { intraOpNumThreads: Number(threads), interOpNumThreads: 1, extra: noSpinning }),
  })),
);
for (const { session } of sessions) for (let index = 0; index < 50; index++) await session.run(feeds);

for (let round = 1; round <= Number(values.repeat); round++) {
  for (const { threads, session } of sessions) {
    const wall: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (let index = 0; index < runs; index++) {
      const started = performance.now();
      await session.run(feeds);
      wall.push(performance.now() - started);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const { p50, p99 } = summarize(wall);
    const load = loadavg()[0]!.toFixed(1);
    console.log(
      `round ${round}, ${threads} intra-op thread(s), ${tokens} tokens, load ${load}: wall p50 ${p50.toFixed(2)} / p99 ${p99.toFixed(2)} ms, ` +
        `CPU ${((cpu.user + cpu.system) / 1000 / runs).toFixed(2)} ms per run`,
    );
  }
}
