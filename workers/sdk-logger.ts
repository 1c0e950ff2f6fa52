import type { LogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/worker';
import type { Logger } from '../src/logging/logger.ts';

/**
 * The Temporal SDK's warnings and errors — a failing workflow task (a payload over the limit, a
 * nondeterministic replay), a failed activity attempt — through skillsmith's own logger, so they
 * reach the worker's log and not only the Temporal server's. Below warn they are dropped, as before.
 */
export function sdkLogger(logger: Logger): SdkLogger {
  const log = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    if (level !== 'WARN' && level !== 'ERROR') return;
    // pino serialises an Error only under `err`.
    const { error, ...rest } = meta as LogMetadata & { error?: unknown };
    const fields = error instanceof Error ? { ...rest, err: error } : meta;
    if (level === 'WARN') logger.warn(fields, message);
    else logger.error(fields, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
