import { CancellationScope, isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ReviewOutcomeOfRun } from '../activities/review.ts';
import type { TrackRecordUpdate } from '../src/contracts/review-contract.ts';
import { retryPolicy } from './retry-policies.ts';
import { describeFailure, LLM_REVIEW_ACTIVITY_OPTIONS, REVIEW_DEADLINE } from './run-review.ts';

// Bookkeeping and the track record of a whole batch: database work and one recall per distinct goal.
// They heartbeat, so a batch whose worker died is retried within 20 s rather than after 2 minutes.
const { beginReviews, updateTrackRecords, finishReviews, finishReview, recordReviewFailures } = proxyActivities<Activities>({
  summary: 'review records and track records of a batch',
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: retryPolicy({ initialIntervalSeconds: 1 }),
});

// The LLM reviewer, one run at a time, as for a single run's review.
const { reviewWithLlm } = proxyActivities<Activities>(LLM_REVIEW_ACTIVITY_OPTIONS);

/** LLM reviews of one batch running at once: a batch's reviews finish in reasonable time without flooding the LLM. */
export const LLM_REVIEW_CONCURRENCY = 4;

export interface RunReviewsInput {
  tenantId: string;
  /** The runs of one intake batch, sorted. */
  runIds: string[];
  /** Overrides REVIEW_DEADLINE (tests shorten it). */
  deadlineMs?: number;
}

export interface RunReviewsResult {
  completed: number;
  failed: number;
  /** Runs another review execution had claimed already (at most once per run). */
  skipped: number;
}

/**
 * The background review of one intake batch's runs (id from reviewBatchWorkflowId: it names the
 * tenant and the runs; started once per batch, outliving the intake that started it), so reviews
 * keep pace with recording: claim the runs, update their track records together, then, when
 * reviews are on, let the LLM reviewer look at each completed run (a few at a time, each under its
 * own deadline). Never fatal: a run whose review fails is recorded as failed once, alone; past the
 * bookkeeping's deadline every run it had not finished is.
 */
export async function runReviews(input: RunReviewsInput): Promise<RunReviewsResult> {
  const { tenantId, runIds } = input;
  const deadline = input.deadlineMs ?? REVIEW_DEADLINE;
  const reviewId = workflowInfo().workflowId;
  const result: RunReviewsResult = { completed: 0, failed: 0, skipped: 0 };
  // A cancelled scope here is the deadline's timer (the workflow itself is never cancelled by the intake).
  const reason = (error: unknown) =>
    isCancellation(error)
      ? `ReviewDeadlineExceeded: not finished within ${deadline}${typeof deadline === 'number' ? ' ms' : ''}`
      : describeFailure(error);
  const fail = async (failures: Array<{ runId: string; error: string }>) => {
    if (failures.length === 0) return;
    await CancellationScope.nonCancellable(() => recordReviewFailures({ tenantId, failures }));
    result.failed += failures.length;
  };

  // The batch's bookkeeping and track records, under one deadline; until the claim is known every run counts as this review's.
  let unfinished: string[] = runIds;
  let llmReviews: Array<{ runId: string; update: TrackRecordUpdate }> = [];
  try {
    await CancellationScope.withTimeout(deadline, async () => {
      const begun = await beginReviews({ tenantId, runIds, reviewId });
      unfinished = begun.claimed;
      result.skipped = runIds.length - begun.claimed.length;
      if (begun.claimed.length === 0) return;
      const tracked = await updateTrackRecords({ tenantId, runIds: begun.claimed });
      const llmReview = new Set(begun.llmReview);
      const trackRecordOnly: ReviewOutcomeOfRun[] = [];
      const failures: Array<{ runId: string; error: string }> = [];
      for (const run of tracked) {
        if ('error' in run) failures.push(run);
        else if (llmReview.has(run.runId)) llmReviews.push(run);
        else trackRecordOnly.push({ runId: run.runId, decision: 'track_record_only', detail: { ...run.update } });
      }
      await fail(failures);
      await finishReviews({ tenantId, outcomes: trackRecordOnly });
      result.completed += trackRecordOnly.length;
      unfinished = llmReviews.map((run) => run.runId);
    });
  } catch (error) {
    await fail(unfinished.map((runId) => ({ runId, error: reason(error) })));
    llmReviews = [];
  }

  // The LLM review of each completed run, a few at a time, each under its own deadline and never
  // fatal to the others.
  const queue = [...llmReviews];
  const reviewNext = async (): Promise<void> => {
    for (let run = queue.shift(); run; run = queue.shift()) {
      const { runId, update } = run;
      try {
        await CancellationScope.withTimeout(deadline, async () => {
          const outcome = await reviewWithLlm({ tenantId, runId, reviewRunId: reviewId });
          await finishReview({ tenantId, runId, decision: outcome.decision, detail: { ...update, ...outcome } });
        });
        result.completed += 1;
      } catch (error) {
        await fail([{ runId, error: reason(error) }]);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LLM_REVIEW_CONCURRENCY, queue.length) }, reviewNext));
  return result;
}
