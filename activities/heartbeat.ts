import { Context } from '@temporalio/activity';

/** How often a long call reports that its worker is alive: at most this long, and a third of the activity's heartbeat timeout. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/**
 * Runs a call that does not report progress itself (one LLM request, one transaction) while
 * heartbeating, so a lost worker is noticed within the heartbeat timeout rather than the
 * start-to-close timeout, and a cancelled pass aborts the call through the signal.
 */
export async function whileHeartbeating<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  // The timeout is the pass's setting (SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS, at least 5 s): a short one is
  // still met several times over.
  const timeoutMs = context.info.heartbeatTimeoutMs;
  const intervalMs = timeoutMs ? Math.min(HEARTBEAT_INTERVAL_MS, timeoutMs / 3) : HEARTBEAT_INTERVAL_MS;
  const timer = setInterval(() => context.heartbeat(), intervalMs);
  try {
    return await call(context.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}
