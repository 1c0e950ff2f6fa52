import { Context } from '@temporalio/activity';

/** How often a long call reports that its worker is alive; well inside every heartbeat timeout. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/**
 * Runs a call that does not report progress itself (one LLM request, one transaction) while
 * heartbeating, so a lost worker is noticed within the heartbeat timeout rather than the
 * start-to-close timeout, and a cancelled pass aborts the call through the signal.
 */
export async function whileHeartbeating<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_INTERVAL_MS);
  try {
    return await call(context.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}
