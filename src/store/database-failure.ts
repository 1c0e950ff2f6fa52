import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * The database cannot be reached, or it is restarting or shutting down: the request in hand
 * fails, and the same request later may succeed (HTTP 503 with Retry-After, retried by Temporal).
 */
export class DatabaseUnavailable extends SkillsmithError {
  static override readonly code = 'DatabaseUnavailable';
  static override readonly httpStatus = 503;
  static override readonly retryAfterSeconds = 5;
}

/** The database is out of disk (SQLSTATE 53100, ENOSPC): nothing can be written until space is freed. */
export class StorageFull extends SkillsmithError {
  static override readonly code = 'StorageFull';
  static override readonly httpStatus = 503;
  static override readonly retryAfterSeconds = 30;
}

/**
 * SQLSTATEs of a lost or refused connection: class 08 (connection exception), 57P01–57P03
 * (administrator or crash shutdown, "the database system is starting up"), 53300 (too many
 * connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/** What the socket says when the server is gone (pg passes these through as the error's code). */
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** pg's own errors for a connection that ended, which carry no code. */
const UNAVAILABLE_MESSAGE = /Connection terminated|is not queryable|timeout exceeded when trying to connect/;
const STORAGE_FULL_MESSAGE = /No space left on device/i;
/** Node's codes for a server certificate it refused, and pg's words for a server without TLS. */
const TLS_REFUSED_CODE = /CERT|SIGNED|UNABLE_TO_|^ERR_TLS_|^ERR_SSL_/;
const TLS_UNSUPPORTED_MESSAGE = /does not support SSL connections/;

function codeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * What a failed database call means for the caller, when it is the database's trouble rather than
 * the query's: `StorageFull` or `DatabaseUnavailable`, with the driver's message as the cause;
 * undefined for anything else (a bad query, a constraint, a domain error). Follows `cause`, so an
 * error wrapped on its way up is still recognised.
 */
export function databaseFailure(error: unknown): DatabaseUnavailable | StorageFull | undefined {
  if (error instanceof DatabaseUnavailable || error instanceof StorageFull) return error;
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    const code = codeOf(current);
    const firstLine = current.message.split('\n')[0]!;
    if (code === '53100' || STORAGE_FULL_MESSAGE.test(current.message)) {
      return new StorageFull(`the database is out of disk space: ${firstLine}`, { cause: error });
    }
    if ((code && TLS_REFUSED_CODE.test(code)) || TLS_UNSUPPORTED_MESSAGE.test(current.message)) {
      // Not the database's mood: DATABASE_URL's TLS settings and the server disagree, until one changes.
      return new DatabaseUnavailable(
        `the TLS connection to the database failed: ${firstLine}${code ? ` (${code})` : ''}: check DATABASE_URL's sslmode, sslrootcert, sslcert and sslkey`,
        { cause: error },
      );
    }
    if ((code && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) || UNAVAILABLE_MESSAGE.test(current.message)) {
      return new DatabaseUnavailable(`the database is unavailable: ${firstLine || code}`, { cause: error });
    }
  }
  return undefined;
}
