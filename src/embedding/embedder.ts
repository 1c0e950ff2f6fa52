import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Pooling, Prefixes } from './model-profiles.ts';
import { EmbeddingDimensionMismatch, EmbeddingModelUnavailable } from './embedding-errors.ts';
import { modelProfile } from './model-profiles.ts';
import { loadEmbeddingRuntime } from './embedding-runtime.ts';

/** What a text is embedded as; selects the model's task prefix. */
export type EmbeddingKind = 'goal' | 'document' | 'query';

export interface EmbedOptions {
  /** Called after each batch with the number of texts embedded so far and the total. */
  onProgress?: (done: number, total: number) => void;
}

export interface Embedder {
  readonly modelId: string;
  readonly dimension: number;
  /** L2-normalised vectors, one per text, in order. */
  embed(texts: string[], kind: EmbeddingKind, options?: EmbedOptions): Promise<Float32Array[]>;
}

/** The embedder's slice of the configuration (SKILLSMITH_EMBEDDING_*, SKILLSMITH_MODEL_DIR, SKILLSMITH_HUB_URL). */
export interface EmbeddingSettings {
  model: string;
  modelDir: string;
  allowRemoteModels: boolean;
  /** Where `models pull` fetches hub models (SKILLSMITH_HUB_URL). */
  hubUrl?: string;
  pooling: Pooling;
  prefixes: Prefixes;
  dimension: number | undefined;
  batchSize: number;
}

const taskPrefixes: Record<EmbeddingSettings['prefixes'], Record<EmbeddingKind, string>> = {
  // nomic-embed-text: https://huggingface.co/nomic-ai/nomic-embed-text-v1.5#usage
  nomic: { goal: 'clustering: ', document: 'search_document: ', query: 'search_query: ' },
  // e5: "query: " for symmetric tasks (goal to goal), "passage: " for what is searched;
  // https://huggingface.co/intfloat/e5-small-v2#faq
  e5: { goal: 'query: ', document: 'passage: ', query: 'query: ' },
  // bge v1.5: no instruction for similarity between sentences (goal to goal) nor for passages; the
  // retrieval instruction for a short query; https://huggingface.co/BAAI/bge-small-en-v1.5#using-sentence-transformers
  bge: { goal: '', document: '', query: 'Represent this sentence for searching relevant passages: ' },
  none: { goal: '', document: '', query: '' },
};

export function taskPrefix(prefixes: EmbeddingSettings['prefixes'], kind: EmbeddingKind): string {
  return taskPrefixes[prefixes][kind];
}

type FeatureExtractor = (
  texts: string[],
  options: { pooling: 'mean' | 'cls'; normalize: boolean },
) => Promise<{ data: Float32Array; dims: number[] }>;

interface LoadedModel {
  /** The batch path (a pass's goals): onnxruntime's default intra-op threads, one per core; loaded on first use. */
  batchExtractor: () => Promise<FeatureExtractor>;
  /** The latency path (one text: a recall's goal); see `queryExtractor`. */
  queryExtractor: () => Promise<FeatureExtractor>;
  dimension: number;
}

/**
 * onnxruntime's intra-op threads spin after each run by default, waiting for the next one: on
 * 2 cores that spinning took the core PostgreSQL and the HTTP server needed (a recall's own
 * process CPU went from ~8 to ~12 ms per query, bench/results/2026-12-01-recall-latency.md), and two processes'
 * pools (API and a worker embedding a pass) spun against each other. Threads sleep instead.
 */
const noSpinning = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };

// One load per process and model: the pipeline holds an ONNX session worth keeping.
const loadedModels = new Map<string, Promise<LoadedModel>>();

async function fileExists(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isFile(),
    () => false,
  );
}

/**
 * The ONNX variant present locally: full precision when `onnx/model.onnx` is there, else the
 * int8 `onnx/model_quantized.onnx` (what the registry-shipped test model provides).
 */
async function localDtype(modelPath: string): Promise<'fp32' | 'q8' | undefined> {
  if (await fileExists(join(modelPath, 'onnx', 'model.onnx'))) return 'fp32';
  if (await fileExists(join(modelPath, 'onnx', 'model_quantized.onnx'))) return 'q8';
  return undefined;
}

async function loadModel(settings: EmbeddingSettings): Promise<LoadedModel> {
  const modelDir = resolve(settings.modelDir);
  const modelPath = join(modelDir, settings.model);
  const searched = [
    modelPath,
    settings.allowRemoteModels ? 'the Hugging Face hub' : 'the hub (disabled: SKILLSMITH_ALLOW_REMOTE_MODELS=false)',
  ];
  const dtype = await localDtype(modelPath);
  if (!dtype && !settings.allowRemoteModels) {
    throw new EmbeddingModelUnavailable(settings.model, searched, 'no onnx/model.onnx or onnx/model_quantized.onnx');
  }
  const { transformers } = await loadEmbeddingRuntime();
  transformers.env.allowLocalModels = true;
  transformers.env.localModelPath = `${modelDir}/`;
  transformers.env.allowRemoteModels = settings.allowRemoteModels;
  // transformers.js caches hub downloads as <cacheDir>/<modelId>/<file>: the local layout, so a
  // model fetched once (when allowed) is found in SKILLSMITH_MODEL_DIR from then on.
  transformers.env.cacheDir = modelDir;
  const load = async (sessionOptions: Record<string, unknown>): Promise<FeatureExtractor> => {
    try {
      return await transformers.pipeline('feature-extraction', settings.model, {
        dtype: dtype ?? 'fp32',
        device: 'cpu',
        session_options: { ...sessionOptions, extra: noSpinning },
      });
    } catch (error) {
      throw new EmbeddingModelUnavailable(settings.model, searched, error instanceof Error ? error.message : String(error));
    }
  };
  /** One session per path, loaded once on first use; a failed load is tried again by the next. */
  const loadedOnUse = (sessionOptions: Record<string, unknown>) => {
    let loading: Promise<FeatureExtractor> | undefined;
    return () => {
      loading ??= load(sessionOptions);
      loading.catch(() => (loading = undefined));
      return loading;
    };
  };
  // One short text gains nothing from a second thread (a ~10-token goal is ~2 ms of one core) and
  // a single-threaded session cannot fight a pass's pool for the cores: its own session (the same
  // model file and weights, so the same vectors). It is loaded first and probed for the dimension,
  // so a process that only ever embeds one text at a time (a recall) never loads the batch session:
  // a CLI recall loaded both, ~0.7 s of CPU for the second.
  const queryExtractor = loadedOnUse({ intraOpNumThreads: 1, interOpNumThreads: 1 });
  const batchExtractor = loadedOnUse({});
  const probe = await (await queryExtractor())(['dimension probe'], { pooling: settings.pooling, normalize: true });
  const dimension = probe.dims.at(-1);
  if (!dimension) {
    throw new EmbeddingModelUnavailable(settings.model, searched, `unexpected output shape [${probe.dims.join(', ')}]`);
  }
  return { batchExtractor, queryExtractor, dimension };
}

/**
 * Goals per onnxruntime call of a background embedder, ~12 ms of one core with the test model: the
 * event loop answers requests between two calls. Through HTTP with a populated tenant, 8 recorded
 * 118–124 runs/s, 2 recorded 166–183 with the reviews done as soon, 1 recorded 190–220 with the
 * reviews ~15 % later and ~15 % more CPU per run (bench/results/2026-11-29-run-intake.md).
 */
export const BACKGROUND_BATCH_SIZE = 2;

export interface EmbedderChoice {
  /**
   * Work nobody waits for (a review batch's goals) in a process that also answers requests:
   * every batch through the single-threaded session, at most BACKGROUND_BATCH_SIZE texts a call,
   * one background batch of the process at a time.
   * onnxruntime-node runs a session synchronously on the event loop, so a 32-goal batch on the
   * default session held `POST /v1/runs` for a few hundred ms and took both cores; one thread also
   * costs ~20 % less CPU per goal than two (bench/results/2026-11-29-run-intake.md). Same model, same vectors.
   */
  background?: boolean;
}

// Background batches of the process take turns: one at a time, so between two of them the event
// loop answers what came in, however many reviews embed at once.
let backgroundTail: Promise<unknown> = Promise.resolve();
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const result = backgroundTail.then(work);
  backgroundTail = result.catch(() => undefined);
  return result;
}

/**
 * The sentence embedder: a transformers.js feature-extraction pipeline over the configured
 * model, mean (or CLS) pooling and L2 normalisation, task prefixes from config, batched.
 * Fails fast with `EmbeddingModelUnavailable` when the model cannot be loaded — never another
 * model in its place — and with `EmbeddingDimensionMismatch` when `dimension` is configured and
 * the model disagrees.
 */
export async function createEmbedder(settings: EmbeddingSettings, choice: EmbedderChoice = {}): Promise<Embedder> {
  const key = JSON.stringify([resolve(settings.modelDir), settings.model, settings.pooling, settings.allowRemoteModels]);
  let loading = loadedModels.get(key);
  if (!loading) {
    loading = loadModel(settings);
    loadedModels.set(key, loading);
    // A failed load is not cached: the operator may pull the model and retry in-process.
    loading.catch(() => loadedModels.delete(key));
  }
  const { batchExtractor, queryExtractor, dimension } = await loading;
  if (settings.dimension !== undefined && settings.dimension !== dimension) {
    throw new EmbeddingDimensionMismatch(settings.model, settings.dimension, dimension, 'SKILLSMITH_EMBEDDING_DIMENSION');
  }
  // A dynamically quantized model gives a text the same vector only when it runs alone (its profile says so).
  const batchSize = modelProfile(settings.model)?.oneTextPerRun
    ? 1
    : choice.background
      ? Math.min(settings.batchSize, BACKGROUND_BATCH_SIZE)
      : settings.batchSize;
  return {
    modelId: settings.model,
    dimension,
    async embed(texts, kind, options = {}) {
      const prefix = taskPrefix(settings.prefixes, kind);
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = texts.slice(start, start + batchSize).map((text) => prefix + text);
        const run = texts.length === 1 || choice.background ? await queryExtractor() : await batchExtractor();
        const infer = () => run(batch, { pooling: settings.pooling, normalize: true });
        const output = await (choice.background ? inTurn(infer) : infer());
        for (let row = 0; row < batch.length; row++) {
          vectors.push(output.data.slice(row * dimension, (row + 1) * dimension));
        }
        options.onProgress?.(vectors.length, texts.length);
      }
      return vectors;
    },
  };
}
