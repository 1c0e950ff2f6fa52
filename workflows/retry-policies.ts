import type { RetryPolicy } from '@temporalio/common';
import { NON_RETRYABLE_ERROR_CODES } from '../src/contracts/non-retryable-error-codes.ts';

/**
 * How long a step's retries outlast a database or Temporal outage (a restart by `up`'s supervisor
 * takes seconds; issue #30 asks for at least two minutes): a step that only fails because the
 * database is away keeps trying for this long before the pass fails.
 */
export const OUTLASTED_OUTAGE_SECONDS = 150;
const BACKOFF_COEFFICIENT = 2;
const MAXIMUM_INTERVAL_SECONDS = 30;

/** The attempts whose waits between them add up to OUTLASTED_OUTAGE_SECONDS. */
function attemptsOutlastingAnOutage(initialIntervalSeconds: number): number {
  let attempts = 1;
  for (let waited = 0, interval = initialIntervalSeconds; waited < OUTLASTED_OUTAGE_SECONDS; attempts += 1) {
    waited += Math.min(interval, MAXIMUM_INTERVAL_SECONDS);
    interval *= BACKOFF_COEFFICIENT;
  }
  return attempts;
}

/**
 * The retry policy of a pass or review step: exponential backoff from the first interval, capped at
 * 30 s between attempts, never a retry of an error skillsmith marks non-retryable (a typed failure
 * the workflow branches on). `maximumAttempts` bounds a step whose failure is not the database's
 * (the LLM call); without it, the step retries long enough to outlast an outage of
 * OUTLASTED_OUTAGE_SECONDS.
 */
export function retryPolicy(options: { initialIntervalSeconds: number; maximumAttempts?: number }): RetryPolicy {
  return {
    initialInterval: options.initialIntervalSeconds * 1000,
    backoffCoefficient: BACKOFF_COEFFICIENT,
    maximumInterval: MAXIMUM_INTERVAL_SECONDS * 1000,
    maximumAttempts: options.maximumAttempts ?? attemptsOutlastingAnOutage(options.initialIntervalSeconds),
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_CODES],
  };
}
