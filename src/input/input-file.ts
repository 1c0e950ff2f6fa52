import { stat } from 'node:fs/promises';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * A file named on the command line that cannot be read as one: missing, a directory, not
 * permitted. Said in words naming the file, not as the system's `ENOENT: no such file or
 * directory, open '…'` (nor as EISDIR halfway through a stream).
 */
export class InputFileUnreadable extends SkillsmithError {
  static override readonly code = 'InputFileUnreadable';
  static override readonly httpStatus = 400;
  static override readonly retryable = false;
  constructor(
    readonly file: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`cannot read ${file}: ${reason}`, options);
  }
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
};

/** The file's size once it is known to be a regular file (or a FIFO); InputFileUnreadable otherwise. */
export async function requireReadableFile(file: string): Promise<number> {
  const stats = await stat(file).catch((error: NodeJS.ErrnoException) => {
    throw new InputFileUnreadable(file, REASONS[error.code ?? ''] ?? `${error.code ?? 'error'}: ${error.message}`, { cause: error });
  });
  if (stats.isDirectory()) throw new InputFileUnreadable(file, 'it is a directory, not a file');
  if (!stats.isFile() && !stats.isFIFO()) throw new InputFileUnreadable(file, 'it is not a regular file');
  return stats.size;
}
