import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { checkMemberPath, PACKAGE_BYTE_LIMIT, PACKAGE_FILE_LIMIT, type SkillPackage } from './skill-package.ts';
import {
  SkillPackagePathEscape,
  SkillPackageSymlink,
  SkillPackageTooLarge,
  SkillPackageTooManyFiles,
  SkillPackageUnreadable,
} from './validation-errors.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * The package archive: a deterministic tar (members sorted by path; mtime 0, uid/gid 0,
 * mode 0644, no user or group names; files only) compressed with gzip whose header mtime
 * is 0 and OS byte 255. The same files always give the same bytes, so content_sha256 is a
 * function of the content alone.
 */
const FIXED_MTIME = new Date(0);
const GZIP_LEVEL = 9;
/** The largest decompressed tar we accept: 1 MiB of content plus headers and padding. */
const MAX_TAR_BYTES = PACKAGE_BYTE_LIMIT + (PACKAGE_FILE_LIMIT + 8) * 3 * 512 + 10_240;

export class SkillMemberNotFound extends SkillsmithError {
  static override readonly code = 'SkillMemberNotFound';
  static override readonly httpStatus = 404;
  constructor(readonly path: string) {
    super(`package has no member ${JSON.stringify(path)}`);
  }
}

function compareMemberPaths(left: string, right: string): number {
  return Buffer.compare(Buffer.from(left, 'utf8'), Buffer.from(right, 'utf8'));
}

async function collect(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export async function createPackageArchive(skillPackage: SkillPackage): Promise<Uint8Array> {
  const pack = tar.pack();
  const tarBytes = collect(pack);
  const paths = [...skillPackage.files.keys()].sort(compareMemberPaths);
  for (const memberPath of paths) {
    checkMemberPath(memberPath);
    const content = Buffer.from(skillPackage.files.get(memberPath) ?? new Uint8Array());
    await new Promise<void>((resolveEntry, rejectEntry) => {
      pack.entry(
        {
          name: memberPath,
          size: content.byteLength,
          mode: 0o644,
          mtime: FIXED_MTIME,
          uid: 0,
          gid: 0,
          uname: '',
          gname: '',
          type: 'file',
        },
        content,
        (error) => (error ? rejectEntry(error) : resolveEntry()),
      );
    });
  }
  pack.finalize();
  const gzipped = gzipSync(await tarBytes, { level: GZIP_LEVEL });
  // RFC 1952 header: bytes 4-7 are MTIME, byte 9 is OS. Fix both so no host detail leaks in.
  gzipped.writeUInt32LE(0, 4);
  gzipped[9] = 0xff;
  return new Uint8Array(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength);
}

export function contentSha256(archiveBytes: Uint8Array): string {
  return createHash('sha256').update(archiveBytes).digest('hex');
}

function decompress(archiveBytes: Uint8Array): Buffer {
  try {
    return gunzipSync(archiveBytes, { maxOutputLength: MAX_TAR_BYTES });
  } catch (error) {
    if (error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new SkillPackageTooLarge(MAX_TAR_BYTES + 1);
    }
    throw new SkillPackageUnreadable(`gzip: ${(error as Error).message}`);
  }
}

/**
 * Walk every member of an archive, refusing links, special files, paths outside the root,
 * duplicates and anything past the package limits. Calls `visit` for each regular file.
 */
async function readMembers(archiveBytes: Uint8Array, visit: (memberPath: string, content: Buffer) => void): Promise<void> {
  const extract = tar.extract();
  const tarBytes = decompress(archiveBytes);
  Readable.from([tarBytes]).pipe(extract);
  const seen = new Set<string>();
  let totalBytes = 0;
  try {
    for await (const entry of extract) {
      const header = entry.header;
      const memberPath = header.name.replace(/^\.\//, '');
      if (header.type === 'symlink' || header.type === 'link') {
        entry.resume();
        throw new SkillPackageSymlink(memberPath);
      }
      if (header.type === 'directory') {
        checkMemberPath(memberPath.replace(/\/$/, ''));
        entry.resume();
        continue;
      }
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        entry.resume();
        throw new SkillPackageUnreadable(`member ${JSON.stringify(memberPath)} has unsupported type ${header.type}`);
      }
      checkMemberPath(memberPath);
      if (seen.has(memberPath)) throw new SkillPackagePathEscape(memberPath, 'duplicate member');
      seen.add(memberPath);
      if (seen.size > PACKAGE_FILE_LIMIT) throw new SkillPackageTooManyFiles(seen.size);
      const content = await collect(entry);
      totalBytes += content.byteLength;
      if (totalBytes > PACKAGE_BYTE_LIMIT) throw new SkillPackageTooLarge(totalBytes);
      visit(memberPath, content);
    }
  } catch (error) {
    extract.destroy();
    // Our own refusals pass through; whatever tar-stream throws means the archive is unreadable.
    if (error instanceof SkillsmithError) throw error;
    throw new SkillPackageUnreadable(`tar: ${(error as Error).message}`);
  }
}

/** Read a whole package back from archive bytes. */
export async function readPackageArchive(archiveBytes: Uint8Array, directoryName: string): Promise<SkillPackage> {
  const files = new Map<string, Uint8Array>();
  await readMembers(archiveBytes, (memberPath, content) => {
    files.set(memberPath, new Uint8Array(content));
  });
  return { directoryName, files };
}

/** Return one member of the archive. The path is checked before the archive is opened. */
export async function openMember(archiveBytes: Uint8Array, memberPath: string): Promise<Uint8Array> {
  checkMemberPath(memberPath);
  let found: Uint8Array | undefined;
  await readMembers(archiveBytes, (candidate, content) => {
    if (candidate === memberPath) found = new Uint8Array(content);
  });
  if (found === undefined) throw new SkillMemberNotFound(memberPath);
  return found;
}
