import type { Logger } from '../logging/logger.ts';

/** SIGTERM to exit for `up`, `worker` and `api`: the drain gets this long, then the process exits anyway. */
export const SHUTDOWN_BOUND_MS = 30_000;

/** Arms the bound once shutdown begins: a drain that hangs (an activity that ignores cancellation) cannot keep the process. */
export function exitIfShutdownOverruns(logger: Logger, boundMs = SHUTDOWN_BOUND_MS): void {
  setTimeout(() => {
    logger.error(`shutdown did not finish within ${boundMs / 1000} s: exiting`);
    process.exit(1);
  }, boundMs).unref();
}
