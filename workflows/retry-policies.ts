import type { RetryPolicy } from '@temporalio/common';
import { NON_RETRYABLE_ERROR_CODES } from '../src/contracts/non-retryable-error-codes.ts';

/**
 * The retry policy of a pass or review step: exponential backoff from the first interval, at most
 * `maximumAttempts`, and never a retry of an error skillsmith marks non-retryable (a typed failure
 * the workflow branches on).
 */
export function retryPolicy(options: { initialIntervalSeconds: number; maximumAttempts: number }): RetryPolicy {
  return {
    initialInterval: options.initialIntervalSeconds * 1000,
    backoffCoefficient: 2,
    maximumAttempts: options.maximumAttempts,
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_CODES],
  };
}
