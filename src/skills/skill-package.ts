import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import {
  SkillPackageHardLink,
  SkillPackagePathEscape,
  SkillPackageSymlink,
  SkillPackageTooLarge,
  SkillPackageTooManyFiles,
  SkillPackageUnreadable,
} from './validation-errors.ts';

/** A skill package: the directory's name and its regular files by POSIX path relative to it. */
export interface SkillPackage {
  directoryName: string;
  files: Map<string, Uint8Array>;
}

export const SKILL_MANIFEST_PATH = 'SKILL.md';
export const PACKAGE_FILE_LIMIT = 64;
export const PACKAGE_BYTE_LIMIT = 1_048_576;

/** A segment as a URL or a file server would read it: `%2e%2e` is `..` there. */
function percentDecoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Refuse a member path that could land outside the package root: absolute paths, drive
 * letters, backslashes, NUL, `..` segments (percent-encoded too), and empty or `.` segments.
 * Returns the path.
 */
export function checkMemberPath(memberPath: string): string {
  if (memberPath.length === 0) throw new SkillPackagePathEscape(memberPath, 'empty path');
  if (memberPath.includes('\0')) throw new SkillPackagePathEscape(memberPath, 'contains NUL');
  if (memberPath.includes('\\')) throw new SkillPackagePathEscape(memberPath, 'contains a backslash');
  if (memberPath.startsWith('/')) throw new SkillPackagePathEscape(memberPath, 'absolute path');
  if (/^[A-Za-z]:/.test(memberPath)) throw new SkillPackagePathEscape(memberPath, 'drive-letter path');
  for (const segment of memberPath.split('/')) {
    const decoded = percentDecoded(segment);
    if (decoded === '..') throw new SkillPackagePathEscape(memberPath, 'contains a .. segment');
    if (decoded === '' || decoded === '.') throw new SkillPackagePathEscape(memberPath, 'empty or . segment');
    if (decoded !== segment && /[/\\]/.test(decoded)) throw new SkillPackagePathEscape(memberPath, 'contains an encoded separator');
  }
  return memberPath;
}

/** Total bytes of a package's files. */
export function packageByteCount(skillPackage: SkillPackage): number {
  let total = 0;
  for (const content of skillPackage.files.values()) total += content.byteLength;
  return total;
}

interface DirectoryEntry {
  memberPath: string;
  absolutePath: string;
  size: number;
  inode: number;
}

async function walk(root: string, relative: string, entries: DirectoryEntry[]): Promise<void> {
  const directory = relative === '' ? root : join(root, relative);
  const names = (await readdir(directory)).sort();
  for (const entryName of names) {
    const memberPath = relative === '' ? entryName : `${relative}/${entryName}`;
    const absolutePath = join(root, memberPath);
    const stats = await lstat(absolutePath);
    if (stats.isSymbolicLink()) throw new SkillPackageSymlink(memberPath);
    if (stats.isDirectory()) {
      await walk(root, memberPath, entries);
    } else if (stats.isFile()) {
      // A second name for a file may be one outside the package (a hard link to ~/.ssh/id_rsa).
      if (stats.nlink > 1) throw new SkillPackageHardLink(memberPath, stats.nlink);
      entries.push({ memberPath: checkMemberPath(memberPath), absolutePath, size: stats.size, inode: stats.ino });
    } else {
      throw new SkillPackageUnreadable(`member ${JSON.stringify(memberPath)} is not a regular file or directory`);
    }
  }
}

/**
 * Read a package from a directory on disk. Uses lstat and never follows a symlink (a
 * symlink anywhere in the tree is refused, and so is a hard-linked file). Counts and sizes
 * are checked before any content is read.
 */
export async function readPackageDirectory(directory: string): Promise<SkillPackage> {
  const root = resolve(directory);
  const rootStats = await lstat(root).catch(() => null);
  if (rootStats === null) throw new SkillPackageUnreadable(`${directory} does not exist`);
  if (rootStats.isSymbolicLink()) throw new SkillPackageSymlink('.');
  if (!rootStats.isDirectory()) throw new SkillPackageUnreadable(`${directory} is not a directory`);
  const entries: DirectoryEntry[] = [];
  await walk(root, '', entries);
  if (entries.length > PACKAGE_FILE_LIMIT) throw new SkillPackageTooManyFiles(entries.length);
  const totalBytes = entries.reduce((sum, entry) => sum + entry.size, 0);
  if (totalBytes > PACKAGE_BYTE_LIMIT) throw new SkillPackageTooLarge(totalBytes);
  const files = new Map<string, Uint8Array>();
  for (const entry of entries) files.set(entry.memberPath, await readMember(entry));
  return { directoryName: basename(root), files };
}

/** Reads the file the walk saw: never through a symlink, and refused if it was swapped or linked since. */
async function readMember(entry: DirectoryEntry): Promise<Uint8Array> {
  const handle = await open(entry.absolutePath, constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP') throw new SkillPackageSymlink(entry.memberPath);
    throw error;
  });
  try {
    const stats = await handle.stat();
    if (stats.nlink > 1) throw new SkillPackageHardLink(entry.memberPath, stats.nlink);
    if (!stats.isFile() || stats.ino !== entry.inode) {
      throw new SkillPackageUnreadable(`member ${JSON.stringify(entry.memberPath)} changed while the package was read`);
    }
    return new Uint8Array(await handle.readFile());
  } finally {
    await handle.close();
  }
}
