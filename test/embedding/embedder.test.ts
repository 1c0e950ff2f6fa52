import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_BATCH_SIZE, createEmbedder, taskPrefix, type Embedder } from '../../src/embedding/embedder.ts';
import { EmbeddingDimensionMismatch, EmbeddingModelUnavailable } from '../../src/embedding/embedding-errors.ts';
import { testEmbeddingModel } from '../../src/embedding/model-pull.ts';
import { dot } from '../../src/clustering/cosine.ts';
import { requireTestModel, testModelDir, testModelSettings } from '../support/test-model.ts';

describe('embedder on the registry-shipped test model', () => {
  let embedder: Embedder;

  beforeAll(async () => {
    await requireTestModel();
    embedder = await createEmbedder(testModelSettings());
  });

  it('loads the pulled model from SKILLSMITH_MODEL_DIR and reports its id and dimension', () => {
    expect(embedder.modelId).toBe(testEmbeddingModel.modelId);
    expect(embedder.dimension).toBe(384);
  });

  it('returns one L2-normalised vector per text, in order', async () => {
    const vectors = await embedder.embed(['restart the billing service', 'what is the capital of Peru?'], 'goal');
    expect(vectors).toHaveLength(2);
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector.length).toBe(384);
      expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 5);
    }
  });

  it('scores paraphrases of one task above unrelated goals', async () => {
    const paraphrases = [
      'deploy the billing-api service to staging',
      'ship billing-api to the staging environment',
      'roll out the latest billing-api build on staging',
    ];
    const unrelated = [
      'write a haiku about lighthouses',
      'how many legs does an octopus have?',
      'summarise the quarterly sales report for the board',
    ];
    const [a, b, c, ...others] = await embedder.embed([...paraphrases, ...unrelated], 'goal');
    const within = [dot(a!, b!), dot(a!, c!), dot(b!, c!)];
    const across = [a!, b!, c!].flatMap((paraphrase) => others.map((other) => dot(paraphrase, other)));
    expect(Math.min(...within)).toBeGreaterThan(Math.max(...across) + 0.2);
    expect(Math.min(...within)).toBeGreaterThan(0.6);
  });

  it('embeds in batches of the configured size, reporting progress after each batch, with the same vectors', async () => {
    const batched = await createEmbedder(testModelSettings({ batchSize: 2 }));
    const texts = ['open a pull request', 'merge the pull request', 'close the issue', 'rotate the API key', 'page on-call'];
    const progress: [number, number][] = [];
    const vectors = await batched.embed(texts, 'goal', { onProgress: (done, total) => progress.push([done, total]) });
    expect(progress).toEqual([
      [2, 5],
      [4, 5],
      [5, 5],
    ]);
    const alone = await embedder.embed([texts[4]!], 'goal');
    expect(dot(vectors[4]!, alone[0]!)).toBeCloseTo(1, 5);
  });

  it('embeds one text (the recall path, its own single-threaded session) as the batch path does', async () => {
    const text = 'book a table for two in Lisbon tomorrow evening';
    const [alone] = await embedder.embed([text], 'goal');
    // Two copies: a batch without padding, so the only difference left is the session.
    const [inBatch, again] = await embedder.embed([text, text], 'goal');
    expect(dot(alone!, inBatch!)).toBeGreaterThan(1 - 1e-6);
    expect(Array.from(again!)).toEqual(Array.from(inBatch!));
  });

  it('embeds in the background (a review batch) through the single-threaded session, a few texts a call, with the same vectors', async () => {
    const background = await createEmbedder(testModelSettings(), { background: true });
    const texts = Array.from({ length: BACKGROUND_BATCH_SIZE + 2 }, (_, index) => `restart worker ${index + 1} of the billing queue`);
    const progress: [number, number][] = [];
    const vectors = await background.embed(texts, 'goal', { onProgress: (done, total) => progress.push([done, total]) });
    // The configured 32 a call would hold the event loop for the whole batch: the background embedder cuts it.
    expect(progress).toEqual([
      [BACKGROUND_BATCH_SIZE, texts.length],
      [texts.length, texts.length],
    ]);
    const foreground = await embedder.embed(texts, 'goal');
    vectors.forEach((vector, index) => expect(dot(vector, foreground[index]!)).toBeGreaterThan(1 - 1e-6));
  });

  it('runs one background batch of the process per event-loop turn, however many embed at once', async () => {
    const background = await createEmbedder(testModelSettings(), { background: true });
    // A counter of event-loop turns: what a request waiting for the loop would get between two batches.
    let turn = 0;
    let counting = true;
    const count = () => {
      turn += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const turnsOfBatches: number[] = [];
    const texts = (name: string) => Array.from({ length: BACKGROUND_BATCH_SIZE * 2 }, (_, index) => `${name} step ${index + 1}`);
    try {
      await Promise.all(
        ['rotate the keys', 'drain the queue', 'page on-call'].map((name) =>
          background.embed(texts(name), 'goal', { onProgress: () => turnsOfBatches.push(turn) }),
        ),
      );
    } finally {
      counting = false;
    }
    expect(turnsOfBatches).toHaveLength(6);
    expect(new Set(turnsOfBatches).size).toBe(turnsOfBatches.length);
  });

  it('applies the nomic task prefixes when configured and none otherwise', async () => {
    expect(taskPrefix('nomic', 'goal')).toBe('clustering: ');
    expect(taskPrefix('nomic', 'document')).toBe('search_document: ');
    expect(taskPrefix('nomic', 'query')).toBe('search_query: ');
    expect(taskPrefix('none', 'query')).toBe('');
    const prefixed = await createEmbedder(testModelSettings({ prefixes: 'nomic' }));
    const text = 'rotate the API key for checkout';
    const [withPrefix] = await prefixed.embed([text], 'query');
    const [explicit] = await embedder.embed([`search_query: ${text}`], 'query');
    const [bare] = await embedder.embed([text], 'query');
    expect(dot(withPrefix!, explicit!)).toBeCloseTo(1, 5);
    expect(dot(withPrefix!, bare!)).toBeLessThan(0.999);
  });

  it('refuses a configured dimension the model does not produce', async () => {
    await expect(createEmbedder(testModelSettings({ dimension: 768 }))).rejects.toThrow(EmbeddingDimensionMismatch);
    await expect(createEmbedder(testModelSettings({ dimension: 768 }))).rejects.toThrow(/produces 384-d vectors but 768-d/);
  });
});

describe('embedder fails fast when the configured model cannot be loaded', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-embedder-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('names the model and the directories searched when the model is missing, within a second', async () => {
    const started = Date.now();
    const error = await createEmbedder(testModelSettings({ model: 'nomic-ai/nomic-embed-text-v1.5', modelDir: scratch })).catch(
      (caught: unknown) => caught,
    );
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(EmbeddingModelUnavailable);
    const message = (error as Error).message;
    expect(message).toContain('nomic-ai/nomic-embed-text-v1.5');
    expect(message).toContain(join(scratch, 'nomic-ai/nomic-embed-text-v1.5'));
    expect(message).toContain('hub (disabled');
    expect((error as EmbeddingModelUnavailable).name).toBe('EmbeddingModelUnavailable');
  });

  it('reports an unloadable ONNX file as unavailable instead of substituting another model', async () => {
    const modelId = 'broken/all-MiniLM-L6-v2';
    const source = join(testModelDir, testEmbeddingModel.modelId);
    const target = join(scratch, modelId);
    await mkdir(join(target, 'onnx'), { recursive: true });
    for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) {
      await copyFile(join(source, file), join(target, file));
    }
    await writeFile(join(target, 'onnx', 'model.onnx'), 'this is not an ONNX model');
    const error = await createEmbedder(testModelSettings({ model: modelId, modelDir: scratch })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbeddingModelUnavailable);
    expect((error as Error).message).toContain(modelId);
  });
});
