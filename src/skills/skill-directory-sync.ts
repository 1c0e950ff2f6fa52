import { createHash, randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { readPackageArchive } from './package-archive.ts';
import { checkMemberPath, SKILL_MANIFEST_PATH } from './skill-package.ts';
import type { SkillRevision } from './skill-revision.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * The shared skills directory (the 004 spec's git-versionable SSOT): every active skill as
 * `DIR/<name>/SKILL.md` plus its members, copied with sha256 dedup. A manifest file records
 * what sync wrote (path → sha256), so that a later sync:
 *   - skips a file whose content is unchanged;
 *   - never overwrites, and never removes, a file it did not write or that was edited since
 *     (warning `locally_modified` instead);
 *   - removes a file it wrote that no active skill holds any more (an archived skill).
 * A SKILL.md over `maxSkillBytes` (default 4 KB) is written and warned `skill_too_large`.
 * Sync never writes outside the directory: a symlink below it, or anything in a target's place
 * that is not a regular file or directory, refuses the whole sync before anything is written.
 */
export const SYNC_MANIFEST_FILE = '.skillsmith-sync.json';

const syncManifestSchema = z.object({
  version: z.literal(1),
  tenantId: z.string(),
  files: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)),
});
type SyncManifest = z.infer<typeof syncManifestSchema>;

export interface SyncWarning {
  code: 'skill_too_large' | 'locally_modified';
  path: string;
  message: string;
}

export interface SyncResult {
  directory: string;
  skills: number;
  written: string[];
  unchanged: string[];
  removed: string[];
  warnings: SyncWarning[];
}

/** What sync reads of the store (the skill repository provides it): active revisions and their archives. */
export interface ActiveSkillReader {
  listActive(tenantId: string, limit: number): Promise<SkillRevision[]>;
  readArchive(tenantId: string, revision: SkillRevision): Promise<Uint8Array>;
}

export interface SyncOptions {
  skills: ActiveSkillReader;
  tenantId: string;
  directory: string;
  maxSkillBytes: number;
  /** At most this many skills (the newest active revision of each). */
  limit?: number;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Sync refuses to touch the directory: a symlink, or something sync never creates, is in its way. */
export class SkillSyncTargetUnsafe extends SkillsmithError {
  static override readonly code = 'SkillSyncTargetUnsafe';
  constructor(
    readonly directory: string,
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${join(directory, path)} ${reason}; skills sync writes only regular files and directories under ${directory} (nothing written)`);
  }
}

/**
 * What is at `relative` under `root`, checked component by component with lstat, so nothing sync
 * reads, writes or removes is reached through a symlink planted in the directory: null when
 * absent, the file's stats when it is a regular file, else SkillSyncTargetUnsafe.
 */
async function inspectTarget(root: string, relative: string): Promise<Stats | null> {
  const segments = relative.split('/');
  let path = root;
  for (const [index, segment] of segments.entries()) {
    path = join(path, segment);
    const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (stats === null) return null;
    const shown = segments.slice(0, index + 1).join('/');
    if (stats.isSymbolicLink()) throw new SkillSyncTargetUnsafe(root, shown, 'is a symlink');
    const last = index === segments.length - 1;
    if (!last && !stats.isDirectory()) throw new SkillSyncTargetUnsafe(root, shown, 'is not a directory');
    if (last && !stats.isFile()) throw new SkillSyncTargetUnsafe(root, shown, 'is not a regular file');
    if (last) return stats;
  }
  return null;
}

/** The regular file at `relative` (inspected first), read without following a symlink; null when absent. */
async function readTarget(root: string, relative: string): Promise<Uint8Array | null> {
  if ((await inspectTarget(root, relative)) === null) return null;
  const handle = await open(join(root, relative), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return new Uint8Array(await handle.readFile());
  } finally {
    await handle.close();
  }
}

/**
 * Writes `content` at `relative` by renaming a fresh temporary file over it. The temporary is
 * created exclusively (O_EXCL: never through a symlink or into a file someone planted), under
 * a random name so a leftover from a crash never blocks a later sync.
 */
async function replaceTarget(root: string, relative: string, content: Uint8Array | string): Promise<void> {
  const target = join(root, relative);
  const temporary = `${target}.skillsmith-tmp-${randomBytes(6).toString('hex')}`;
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  await rename(temporary, target);
}

/** Creates the directories of `relative` one at a time, refusing any that is (or became) a symlink. */
async function makeParents(root: string, relative: string): Promise<void> {
  const segments = relative.split('/').slice(0, -1);
  let path = root;
  for (const [index, segment] of segments.entries()) {
    path = join(path, segment);
    await mkdir(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const stats = await lstat(path);
    if (!stats.isDirectory() || stats.isSymbolicLink()) {
      throw new SkillSyncTargetUnsafe(root, segments.slice(0, index + 1).join('/'), 'is not a directory');
    }
  }
}

async function readManifest(root: string, tenantId: string): Promise<SyncManifest> {
  const bytes = await readTarget(root, SYNC_MANIFEST_FILE);
  if (bytes === null) return { version: 1, tenantId, files: {} };
  const parsed = syncManifestSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
  if (!parsed.success) throw new Error(`${join(root, SYNC_MANIFEST_FILE)} is not a skillsmith sync manifest`);
  if (parsed.data.tenantId !== tenantId) {
    throw new Error(`${root} is synced for tenant ${parsed.data.tenantId}, not ${tenantId}; use another directory`);
  }
  return parsed.data;
}

/** Removes now-empty directories between `path` and `root` (never `root` itself). */
async function pruneEmptyDirectories(root: string, path: string): Promise<void> {
  let directory = dirname(path);
  while (directory.startsWith(`${root}/`)) {
    try {
      await rmdir(directory);
    } catch {
      return;
    }
    directory = dirname(directory);
  }
}

interface PlannedFile {
  relative: string;
  content: Uint8Array;
  digest: string;
  existing: Uint8Array | null;
}

export async function syncSkillDirectory(options: SyncOptions): Promise<SyncResult> {
  await mkdir(resolve(options.directory), { recursive: true });
  // The directory named is the operator's choice (it may itself be a link); below it, nothing is followed.
  const root = await realpath(resolve(options.directory));
  const previous = await readManifest(root, options.tenantId);
  const next: SyncManifest = { version: 1, tenantId: options.tenantId, files: {} };
  const result: SyncResult = { directory: root, skills: 0, written: [], unchanged: [], removed: [], warnings: [] };

  // Plan: every target is inspected before anything is written, so a refusal writes nothing.
  const planned: PlannedFile[] = [];
  const revisions = await options.skills.listActive(options.tenantId, options.limit ?? 10_000);
  for (const revision of revisions) {
    result.skills += 1;
    const skillPackage = await readPackageArchive(await options.skills.readArchive(options.tenantId, revision), revision.name);
    for (const [memberPath, content] of [...skillPackage.files.entries()].sort(([left], [right]) => left.localeCompare(right))) {
      const relative = `${revision.name}/${checkMemberPath(memberPath)}`;
      planned.push({ relative, content, digest: sha256(content), existing: await readTarget(root, relative) });
      if (memberPath === SKILL_MANIFEST_PATH && content.byteLength > options.maxSkillBytes) {
        result.warnings.push({
          code: 'skill_too_large',
          path: relative,
          message: `${relative} is ${content.byteLength} bytes, over ${options.maxSkillBytes}: split the skill instead of growing it`,
        });
      }
    }
  }
  const plannedPaths = new Set(planned.map((file) => file.relative));
  const stale: Array<{ relative: string; digest: string; existing: Uint8Array | null }> = [];
  for (const [relative, digest] of Object.entries(previous.files)) {
    if (!plannedPaths.has(relative)) stale.push({ relative, digest, existing: await readTarget(root, checkMemberPath(relative)) });
  }

  for (const { relative, content, digest, existing } of planned) {
    if (existing !== null && sha256(existing) === digest) {
      next.files[relative] = digest;
      result.unchanged.push(relative);
      continue;
    }
    if (existing !== null && previous.files[relative] !== sha256(existing)) {
      // Not ours, or edited since we wrote it: leave it alone.
      if (previous.files[relative] !== undefined) next.files[relative] = previous.files[relative];
      result.warnings.push({
        code: 'locally_modified',
        path: relative,
        message: `${relative} differs from what sync last wrote (or sync never wrote it); left unchanged`,
      });
      continue;
    }
    await makeParents(root, relative);
    await replaceTarget(root, relative, content);
    next.files[relative] = digest;
    result.written.push(relative);
  }

  for (const { relative, digest, existing } of stale) {
    if (existing === null) continue;
    if (sha256(existing) !== digest) {
      result.warnings.push({
        code: 'locally_modified',
        path: relative,
        message: `${relative} was edited since sync wrote it; not removed`,
      });
      continue;
    }
    const target = join(root, relative);
    await unlink(target);
    await pruneEmptyDirectories(root, target);
    result.removed.push(relative);
  }

  await replaceTarget(root, SYNC_MANIFEST_FILE, `${JSON.stringify(next, null, 2)}\n`);
  return result;
}
