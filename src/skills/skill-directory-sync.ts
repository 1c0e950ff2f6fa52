import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rmdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { readPackageArchive } from './package-archive.ts';
import { checkMemberPath, SKILL_MANIFEST_PATH } from './skill-package.ts';
import type { SkillRevision } from './skill-revision.ts';

/**
 * The shared skills directory (the 004 spec's git-versionable SSOT): every active skill as
 * `DIR/<name>/SKILL.md` plus its members, copied with sha256 dedup. A manifest file records
 * what sync wrote (path → sha256), so that a later sync:
 *   - skips a file whose content is unchanged;
 *   - never overwrites, and never removes, a file it did not write or that was edited since
 *     (warning `locally_modified` instead);
 *   - removes a file it wrote that no active skill holds any more (an archived skill).
 * A SKILL.md over `maxSkillBytes` (default 4 KB) is written and warned `skill_too_large`.
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

async function readIfPresent(path: string): Promise<Uint8Array | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function readManifest(root: string, tenantId: string): Promise<SyncManifest> {
  const bytes = await readIfPresent(join(root, SYNC_MANIFEST_FILE));
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

export async function syncSkillDirectory(options: SyncOptions): Promise<SyncResult> {
  const root = resolve(options.directory);
  await mkdir(root, { recursive: true });
  const previous = await readManifest(root, options.tenantId);
  const next: SyncManifest = { version: 1, tenantId: options.tenantId, files: {} };
  const result: SyncResult = { directory: root, skills: 0, written: [], unchanged: [], removed: [], warnings: [] };

  const revisions = await options.skills.listActive(options.tenantId, options.limit ?? 10_000);
  for (const revision of revisions) {
    result.skills += 1;
    const skillPackage = await readPackageArchive(await options.skills.readArchive(options.tenantId, revision), revision.name);
    for (const [memberPath, content] of [...skillPackage.files.entries()].sort(([left], [right]) => left.localeCompare(right))) {
      const relative = `${revision.name}/${checkMemberPath(memberPath)}`;
      const target = join(root, relative);
      const digest = sha256(content);
      if (memberPath === SKILL_MANIFEST_PATH && content.byteLength > options.maxSkillBytes) {
        result.warnings.push({
          code: 'skill_too_large',
          path: relative,
          message: `${relative} is ${content.byteLength} bytes, over ${options.maxSkillBytes}: split the skill instead of growing it`,
        });
      }
      const existing = await readIfPresent(target);
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
      await mkdir(dirname(target), { recursive: true });
      const temporary = `${target}.skillsmith-tmp`;
      await writeFile(temporary, content, { mode: 0o644 });
      await rename(temporary, target);
      next.files[relative] = digest;
      result.written.push(relative);
    }
  }

  for (const [relative, digest] of Object.entries(previous.files)) {
    if (relative in next.files) continue;
    const target = join(root, checkMemberPath(relative));
    const existing = await readIfPresent(target);
    if (existing === null) continue;
    if (sha256(existing) !== digest) {
      result.warnings.push({
        code: 'locally_modified',
        path: relative,
        message: `${relative} was edited since sync wrote it; not removed`,
      });
      continue;
    }
    await unlink(target);
    await pruneEmptyDirectories(root, target);
    result.removed.push(relative);
  }

  const manifestPath = join(root, SYNC_MANIFEST_FILE);
  await writeFile(`${manifestPath}.tmp`, `${JSON.stringify(next, null, 2)}\n`);
  await rename(`${manifestPath}.tmp`, manifestPath);
  return result;
}
