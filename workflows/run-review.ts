import { CancellationScope, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { retryPolicy } from './retry-policies.ts';

// Bookkeeping and the track record: short database work (a lost worker is retried after 30 s).
const { beginReview, updateTrackRecord, finishReview, recordReviewFailure } = proxyActivities<Activities>({
  summary: 'review record and track record',
  startToCloseTimeout: '30 seconds',
  retry: retryPolicy({ initialIntervalSeconds: 1 }),
});

/** The LLM reviewer: several turns, heartbeating; a misbehaving reviewer is not retried (runReviews uses it too). */
export const LLM_REVIEW_ACTIVITY_OPTIONS: ActivityOptions = {
  summary: 'LLM review of the finished run',
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: retryPolicy({ initialIntervalSeconds: 2, maximumAttempts: 3 }),
};
const { reviewWithLlm } = proxyActivities<Activities>(LLM_REVIEW_ACTIVITY_OPTIONS);

/** A review that has not finished by then is a failure (recorded once), never a hang. */
export const REVIEW_DEADLINE = '15 minutes';

export interface RunReviewInput {
  tenantId: string;
  runId: string;
  /** Overrides REVIEW_DEADLINE (tests shorten it). */
  deadlineMs?: number;
}

/**
 * The background review of one completed run (id `review/<tenant>/<runId>`, started at most once,
 * outliving the intake that started it): update the track record of the procedures the run
 * used, then, when reviews are on, let the LLM reviewer propose none / create / patch through
 * skill_manage. Never fatal: whatever goes wrong is recorded once and the workflow completes.
 */
export async function runReview(input: RunReviewInput): Promise<{ status: 'completed' | 'failed' | 'skipped'; decision?: string }> {
  const { deadlineMs, ...review } = input;
  try {
    return await CancellationScope.withTimeout(deadlineMs ?? REVIEW_DEADLINE, async () => {
      const begun = await beginReview(review);
      if (begun.finished) return { status: 'skipped' as const };
      const track = await updateTrackRecord(review);
      if (!begun.llmReview) {
        await finishReview({ ...review, decision: 'track_record_only', detail: { ...track } });
        return { status: 'completed' as const, decision: 'track_record_only' };
      }
      const outcome = await reviewWithLlm({ ...review, reviewRunId: workflowInfo().workflowId });
      await finishReview({ ...review, decision: outcome.decision, detail: { ...track, ...outcome } });
      return { status: 'completed' as const, decision: outcome.decision };
    });
  } catch (error) {
    const reason = describeFailure(error);
    await CancellationScope.nonCancellable(() => recordReviewFailure({ ...review, error: reason }));
    return { status: 'failed', decision: reason };
  }
}

/** The innermost cause of a failure, named by the deepest failure type (shared with runReviews). */
export function describeFailure(error: unknown): string {
  // The innermost cause says what went wrong; the deepest failure type names it (an activity
  // failure wraps an ApplicationFailure whose type is the domain error's name).
  let current = error as { message?: string; cause?: unknown; type?: string | null } | undefined;
  let type: string | undefined;
  for (; current; current = current.cause as typeof current) {
    if (current.type) type = current.type;
    if (!current.cause) break;
  }
  const message = current?.message ?? String(error);
  return type ? `${type}: ${message}` : message;
}
