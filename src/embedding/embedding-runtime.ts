import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * The ONNX runtime the embedder and the clustering's matrix products run on: transformers.js and
 * the onnxruntime-node it loads, at the versions every model profile was measured with.
 *
 * They are not dependencies of the package. onnxruntime-node's install script fetches a CUDA
 * build on every Linux x64 machine (from nuget.org since 1.22, GitHub before) unless the project
 * installing it says not to, which a package cannot say for the projects that install it: as a
 * dependency it failed every `npm install skillsmith` without that network (issue #31). No
 * version of it skips by default (1.18 to 1.31 all fetch). So skillsmith installs it itself,
 * like its Temporal CLI, PostgreSQL and models: `skillsmith models pull` runs `npm install
 * --ignore-scripts` of these exact versions into the runtime directory (the CPU binaries are in
 * the package; only the CUDA fetch is skipped). Versions are pinned here because a newer
 * onnxruntime changes int8 models' vectors (bge-small-en-v1.5 by up to 0.0074 per component
 * under transformers.js 4.3 / onnxruntime 1.30), which every calibrated threshold rests on.
 */
export const EMBEDDING_RUNTIME_PACKAGES = {
  '@huggingface/transformers': '3.8.1',
  'onnxruntime-node': '1.21.0',
} as const;

/** The runtime's directory under SKILLSMITH_EMBEDDING_RUNTIME_DIR: one per set of versions, so an upgrade never mixes them. */
const RUNTIME_KEY = `transformers-${EMBEDDING_RUNTIME_PACKAGES['@huggingface/transformers']}-onnxruntime-${EMBEDDING_RUNTIME_PACKAGES['onnxruntime-node']}`;

/** Where a process looks when nothing set its runtime directory: the default skillsmith home's. */
const DEFAULT_RUNTIME_DIRECTORY = '.skillsmith/runtime';

/** The runtime is not installed where the process looks, or does not load. */
export class EmbeddingRuntimeUnavailable extends SkillsmithError {
  static override readonly code = 'EmbeddingRuntimeUnavailable';
  static override readonly httpStatus = 503;
  static override readonly retryable = false;
  constructor(
    readonly directory: string,
    readonly reason: string,
  ) {
    super(
      `the embedding runtime (@huggingface/transformers ${EMBEDDING_RUNTIME_PACKAGES['@huggingface/transformers']} on onnxruntime-node ` +
        `${EMBEDDING_RUNTIME_PACKAGES['onnxruntime-node']}) is not usable in ${directory}: ${reason}; install it with: npx skillsmith models pull`,
    );
  }
}

/** Installing the runtime failed: npm is missing, or the registry refused or could not be reached. */
export class EmbeddingRuntimeInstallFailed extends SkillsmithError {
  static override readonly code = 'EmbeddingRuntimeInstallFailed';
}

export type Transformers = typeof import('@huggingface/transformers');
export type OnnxRuntime = typeof import('onnxruntime-node');

/** The installed runtime under `runtimeDirectory` (SKILLSMITH_EMBEDDING_RUNTIME_DIR). */
export function embeddingRuntimePath(runtimeDirectory: string): string {
  return join(resolve(runtimeDirectory), RUNTIME_KEY);
}

const packagePath = (root: string, name: string) => join(root, 'node_modules', ...name.split('/'));

async function installedVersion(root: string, name: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(packagePath(root, name), 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** Why the runtime under `root` is not the pinned one, or undefined when it is. */
async function runtimeProblem(root: string): Promise<string | undefined> {
  for (const [name, version] of Object.entries(EMBEDDING_RUNTIME_PACKAGES)) {
    const found = await installedVersion(root, name);
    if (found !== version) return found === undefined ? `${name} is not installed` : `${name} is ${found}, not ${version}`;
  }
  return undefined;
}

export async function isEmbeddingRuntimePresent(runtimeDirectory: string): Promise<boolean> {
  return (await runtimeProblem(embeddingRuntimePath(runtimeDirectory))) === undefined;
}

export interface RuntimeInstallResult {
  status: 'present' | 'installed';
  directory: string;
  durationMs: number;
}

/**
 * Installs the pinned runtime under `runtimeDirectory` from the npm registry npm is configured
 * with, without install scripts; idempotent. Installed beside its final place and renamed into
 * it, so a concurrent install or a killed one never leaves a half runtime that looks present.
 */
export async function installEmbeddingRuntime(options: {
  runtimeDirectory: string;
  onProgress?: (message: string) => void;
}): Promise<RuntimeInstallResult> {
  const started = Date.now();
  const root = embeddingRuntimePath(options.runtimeDirectory);
  if ((await runtimeProblem(root)) === undefined) return { status: 'present', directory: root, durationMs: Date.now() - started };
  const staging = `${root}.installing-${randomBytes(4).toString('hex')}`;
  await mkdir(staging, { recursive: true });
  try {
    await writeFile(
      join(staging, 'package.json'),
      JSON.stringify({ name: 'skillsmith-embedding-runtime', private: true, dependencies: EMBEDDING_RUNTIME_PACKAGES }, null, 2),
    );
    options.onProgress?.(
      `installing ${Object.entries(EMBEDDING_RUNTIME_PACKAGES)
        .map(([name, version]) => `${name}@${version}`)
        .join(' and ')} from the npm registry (no install scripts) into ${root}`,
    );
    // The staging directory is the project npm installs into: not the one a parent npm (`npm test`,
    // `npx`) names in npm_config_local_prefix. Not `--prefix` either: it moves npm's global config
    // with it, and with it a machine's registry and CA settings.
    const { npm_config_local_prefix: _parentProject, ...environment } = process.env;
    try {
      await promisify(execFile)(
        'npm',
        [
          'install',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
          '--no-package-lock',
          '--omit=dev',
          '--no-update-notifier',
          '--loglevel=error',
        ],
        { cwd: staging, env: environment, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      const { stderr, message } = error as { stderr?: string; message: string };
      const reason = (stderr ?? '').trim().split('\n').slice(-3).join(' ') || message;
      throw new EmbeddingRuntimeInstallFailed(`installing the embedding runtime with npm failed: ${reason}`);
    }
    const problem = await runtimeProblem(staging);
    if (problem !== undefined) throw new EmbeddingRuntimeInstallFailed(`npm installed the embedding runtime, but ${problem}`);
    await rm(root, { recursive: true, force: true });
    await rename(staging, root).catch(async (error: NodeJS.ErrnoException) => {
      // Another process renamed its install into place first: that one is as good.
      if ((await runtimeProblem(root)) !== undefined) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return { status: 'installed', directory: root, durationMs: Date.now() - started };
}

let configuredDirectory: string | undefined;
let loading: Promise<LoadedRuntime> | undefined;

export interface LoadedRuntime {
  transformers: Transformers;
  onnxRuntime: OnnxRuntime;
}

/**
 * Sets where this process loads the runtime from (SKILLSMITH_EMBEDDING_RUNTIME_DIR): the CLI and
 * the composition root do, from the configuration. A process holds one runtime — the clustering's
 * matrix products and the embedder share its onnxruntime, a native module that cannot be swapped
 * once loaded — so a directory set after the first load changes nothing.
 */
export function useEmbeddingRuntime(runtimeDirectory: string): void {
  configuredDirectory = runtimeDirectory;
}

/** The runtime this process uses, loaded once: transformers.js and the onnxruntime-node it runs on. */
export function loadEmbeddingRuntime(): Promise<LoadedRuntime> {
  loading ??= (async () => {
    const root = embeddingRuntimePath(configuredDirectory ?? DEFAULT_RUNTIME_DIRECTORY);
    const problem = await runtimeProblem(root);
    if (problem !== undefined) throw new EmbeddingRuntimeUnavailable(root, problem);
    try {
      // transformers.js's ESM build for Node; its own `import 'onnxruntime-node'` resolves to the
      // same file as this one (the runtime's node_modules), so both hold one onnxruntime.
      const transformers = (await import(
        pathToFileURL(join(packagePath(root, '@huggingface/transformers'), 'dist', 'transformers.node.mjs')).href
      )) as Transformers;
      const onnxRuntime = (await import(
        pathToFileURL(join(packagePath(root, 'onnxruntime-node'), 'dist', 'index.js')).href
      )) as OnnxRuntime;
      return { transformers, onnxRuntime };
    } catch (error) {
      throw new EmbeddingRuntimeUnavailable(root, `it does not load: ${(error as Error).message}`);
    }
  })();
  // A failed load is tried again by the next caller (the runtime may have been installed since).
  loading.catch(() => (loading = undefined));
  return loading;
}
