import {
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  log,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities/index.ts';
import type { RecordRunsInput } from '../activities/review-intake.ts';
import {
  MAX_REPORT_PAYLOAD_BYTES,
  RUN_COMPLETED_SIGNAL,
  RUN_STORED_SIGNAL,
  RUNS_STORED_SIGNAL,
  reviewBatchWorkflowId,
  reviewWorkflowId,
  type RunIntakeInput,
  type StoredRunReference,
  type StoredRunReferences,
} from '../src/contracts/intake-contract.ts';
import { runReview } from './run-review.ts';
import { runReviews } from './run-reviews.ts';

const { recordRuns } = proxyActivities<Activities>({
  summary: 'record reported runs',
  startToCloseTimeout: '1 minute',
  // No attempt limit: a database outage delays the intake but cannot end it with reports in hand
  // (a report the database refuses is refused on its own by the activity, not retried).
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const runCompletedSignal = defineSignal<[unknown]>(RUN_COMPLETED_SIGNAL);
export const runStoredSignal = defineSignal<[StoredRunReference]>(RUN_STORED_SIGNAL);
export const runsStoredSignal = defineSignal<[StoredRunReferences]>(RUNS_STORED_SIGNAL);

/**
 * Batches bounded by bytes, oversized signals refused, continue-as-new also by history size and
 * carrying at most one batch of reports. Histories from before it replay with count-only batches.
 */
export const LOSSLESS_INTAKE_PATCH = 'intake-batches-bounded-by-bytes';

/**
 * One review execution per intake batch (runReviews) instead of one child per run: with a
 * populated tenant every run is reviewed, and a child per run held recording to 10–15 runs/s.
 * Histories from before it replay starting a runReview child per run.
 */
export const BATCHED_REVIEWS_PATCH = 'intake-reviews-batched';

/** Reports recorded per activity call: batching is what lets one agent's intake keep up. */
export const BATCH_SIZE = 100;
/**
 * Report bytes per activity call (the SDK's payload warning level); one report may exceed it
 * alone. Reports are admitted below MAX_REPORT_PAYLOAD_BYTES, so an activity's input always stays
 * under Temporal's 2 MiB payload limit.
 */
export const BATCH_BYTES = 512 * 1024;
/** An idle intake ends; the next report starts it again (signalWithStart). */
export const IDLE_TIMEOUT = '10 minutes';
/** Continue as new well before history limits (or when the server suggests it). */
export const MAX_HISTORY_EVENTS = 4_000;
/** The server refuses histories over 50 MB; large reports grow a history fast. */
export const MAX_HISTORY_BYTES = 8 * 1024 * 1024;

interface QueuedReport {
  report: unknown;
  bytes: number;
}

const encoder = new TextEncoder();
const queued = (report: unknown): QueuedReport => ({ report, bytes: encoder.encode(JSON.stringify(report) ?? '').length });

/** The next batch: at most BATCH_SIZE reports and BATCH_BYTES (or one report); any too large for an activity's input is set aside. */
function takeBatch(queue: QueuedReport[]): Pick<RecordRunsInput, 'reports' | 'oversized'> {
  const reports: unknown[] = [];
  const oversized: Array<{ runId: string; bytes: number }> = [];
  let bytes = 0;
  while (queue.length > 0 && reports.length + oversized.length < BATCH_SIZE) {
    const next = queue[0]!;
    if (next.bytes > MAX_REPORT_PAYLOAD_BYTES) {
      const runId = (next.report as { runId?: unknown } | null)?.runId;
      oversized.push({ runId: typeof runId === 'string' ? runId.slice(0, 128) : '(no runId)', bytes: next.bytes });
    } else if (reports.length > 0 && bytes + next.bytes > BATCH_BYTES) {
      break;
    } else {
      reports.push(next.report);
      bytes += next.bytes;
    }
    queue.shift();
  }
  return { reports, oversized };
}

/**
 * The review intake of one agent's finished runs (id `intake/<tenant>/<agent>`; the workflow type
 * keeps its first name, `runIntake`, for the executions running under it): it feeds the background
 * review, never synthesis, which reads the runs from the database. Fed by the `runCompleted` signal
 * (a whole report: recorded here through an idempotent activity) and the `runStored`/`runsStored`
 * signals (runs the API already stored: only their review is left), it starts the review of a run
 * at most once, as a child that outlives the intake.
 */
export async function runIntake(input: RunIntakeInput): Promise<{ recorded: number }> {
  const queue: QueuedReport[] = (input.pending ?? []).map(queued);
  const stored: string[] = [...(input.pendingStored ?? [])];
  setHandler(runCompletedSignal, (report) => {
    queue.push(queued(report));
  });
  setHandler(runStoredSignal, (reference) => {
    stored.push(reference.runId);
  });
  setHandler(runsStoredSignal, (references) => {
    stored.push(...references.runIds);
  });
  let recorded = 0;
  for (;;) {
    if (!(await condition(() => queue.length > 0 || stored.length > 0, input.idleTimeoutMs ?? IDLE_TIMEOUT))) return { recorded };
    const lossless = patched(LOSSLESS_INTAKE_PATCH);
    const batch = lossless ? takeBatch(queue) : { reports: queue.splice(0, BATCH_SIZE).map((entry) => entry.report) };
    const storedRunIds = stored.splice(0, BATCH_SIZE);
    const result = await recordRuns({
      tenantId: input.tenantId,
      agentId: input.agentId,
      ...batch,
      ...(storedRunIds.length > 0 ? { storedRunIds } : {}),
    });
    recorded += result.inserted;
    if (result.review.length > 0) {
      if (patched(BATCHED_REVIEWS_PATCH)) await startReviews(input, result.review);
      else await startReviewPerRun(input, result.review);
    }
    const info = workflowInfo();
    const historyFull =
      info.continueAsNewSuggested ||
      info.historyLength > (input.historyLimit ?? MAX_HISTORY_EVENTS) ||
      (lossless && info.historySize > MAX_HISTORY_BYTES);
    // The next run's input carries what is queued only while that fits one batch: past it, the
    // reports in hand are recorded first (a steady stream still continues as new between batches).
    const carriesTooMuch = lossless && queue.reduce((bytes, entry) => bytes + entry.bytes, 0) > BATCH_BYTES;
    if (historyFull && !carriesTooMuch) {
      await condition(allHandlersFinished);
      return await continueAsNew<typeof runIntake>({
        ...input,
        pending: queue.map((entry) => entry.report),
        ...(stored.length > 0 ? { pendingStored: stored } : {}),
      });
    }
  }
}

/** The background review of a batch's runs: one execution for them all, outliving the intake; at most once per set of runs. */
async function startReviews(input: RunIntakeInput, runIds: string[]): Promise<void> {
  const sorted = [...runIds].sort();
  const workflowId = reviewBatchWorkflowId(input.tenantId, sorted);
  await startChild(runReviews, {
    workflowId,
    args: [
      { tenantId: input.tenantId, runIds: sorted, ...(input.reviewDeadlineMs === undefined ? {} : { deadlineMs: input.reviewDeadlineMs }) },
    ],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    staticSummary: `review of ${sorted.length} run${sorted.length === 1 ? '' : 's'} of tenant ${input.tenantId}`,
  }).catch((error: Error) => {
    // The same set of runs is under review already (each run is also claimed once, by one execution).
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    log.info('review already started', { workflowId });
  });
}

/** Before BATCHED_REVIEWS_PATCH: a runReview child per run. */
async function startReviewPerRun(input: RunIntakeInput, runIds: string[]): Promise<void> {
  await Promise.all(
    runIds.map((runId) =>
      startChild(runReview, {
        workflowId: reviewWorkflowId(input.tenantId, runId),
        args: [
          { tenantId: input.tenantId, runId, ...(input.reviewDeadlineMs === undefined ? {} : { deadlineMs: input.reviewDeadlineMs }) },
        ],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      }).catch((error: Error) => {
        // At most once per run: a review that already exists is not started again.
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        log.info('review already started', { runId });
      }),
    ),
  );
}
