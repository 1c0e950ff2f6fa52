import { Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.ts';
import type { RecordRunsInput, RecordRunsResult } from '../../activities/review-intake.ts';
import type { ReviewBatchInput, ReviewInput } from '../../activities/review.ts';
import {
  INTAKE_WORKFLOW_TYPE,
  RUN_COMPLETED_SIGNAL,
  reviewBatchWorkflowId,
  type RunIntakeInput,
} from '../../src/contracts/intake-contract.ts';
import { createLogger } from '../../src/logging/logger.ts';
import type { ReviewOutcome } from '../../src/review/reviewer.ts';
import { installWorkerRuntime } from '../../workers/worker.ts';

/**
 * The intake's and the review's timings — the idle exit, continue-as-new and the review
 * deadline — on the real dev server with stub activities and the timings shortened through the
 * workflow input (the SDK's time-skipping server is a download this machine cannot make).
 */

/** What the stub activities were called with: the workflows' effects, in order. */
const calls = {
  recorded: [] as unknown[],
  finished: [] as Array<ReviewInput & { decision: string }>,
  failed: [] as Array<ReviewInput & { error: string }>,
};

/** Runs whose id starts with `slow` keep the LLM review busy (heartbeating) until cancelled. */
const stubs = {
  async recordRuns(input: RecordRunsInput): Promise<RecordRunsResult> {
    calls.recorded.push(...input.reports);
    const runIds = input.reports.map((report) => (report as { runId: string }).runId);
    return {
      review: runIds.filter((runId) => runId.startsWith('review-') || runId.startsWith('slow-')),
      inserted: runIds.length,
      unchanged: 0,
      refused: [],
    };
  },
  async beginReview(): Promise<{ finished: boolean; llmReview: boolean }> {
    return { finished: false, llmReview: true };
  },
  async updateTrackRecord(): Promise<{ observed: []; disabled: [] }> {
    return { observed: [], disabled: [] };
  },
  async reviewWithLlm(input: ReviewInput & { reviewRunId: string }): Promise<ReviewOutcome> {
    if (input.runId.startsWith('slow-')) {
      const context = Context.current();
      const heartbeat = setInterval(() => context.heartbeat(), 200);
      try {
        await context.sleep(60_000);
      } finally {
        clearInterval(heartbeat);
      }
    }
    return { decision: 'none', summary: 'nothing to keep', turns: 1, calls: [] };
  },
  async finishReview(input: ReviewInput & { decision: string; detail: Record<string, unknown> }): Promise<void> {
    calls.finished.push({ tenantId: input.tenantId, runId: input.runId, decision: input.decision });
  },
  async recordReviewFailure(input: ReviewInput & { error: string }): Promise<void> {
    calls.failed.push(input);
  },
  // The batched review's (runReviews): every run is claimed; runs whose id starts with `missing` are not recorded.
  async beginReviews(input: ReviewBatchInput): Promise<{ claimed: string[]; llmReview: string[] }> {
    return { claimed: input.runIds, llmReview: input.runIds.filter((runId) => !runId.startsWith('track-')) };
  },
  async updateTrackRecords(input: ReviewBatchInput) {
    return input.runIds.map((runId) =>
      runId.startsWith('missing-')
        ? { runId, error: `ReviewedRunMissing: run ${runId} is not recorded` }
        : { runId, update: { observed: [], disabled: [] } },
    );
  },
  async finishReviews(input: { tenantId: string; outcomes: Array<{ runId: string; decision: string }> }): Promise<void> {
    for (const { runId, decision } of input.outcomes) calls.finished.push({ tenantId: input.tenantId, runId, decision });
  },
  async recordReviewFailures(input: { tenantId: string; failures: Array<{ runId: string; error: string }> }): Promise<void> {
    for (const { runId, error } of input.failures) calls.failed.push({ tenantId: input.tenantId, runId, error });
  },
} satisfies Partial<Activities>;

const report = (runId: string) => ({ runId, goal: `goal of ${runId}` });

/** History event types by name (EVENT_TYPE_TIMER_FIRED, …). */
const eventName = (type: temporal.api.enums.v1.EventType | null | undefined) => temporal.api.enums.v1.EventType[type ?? 0] ?? String(type);

async function eventTypes(handle: WorkflowHandle): Promise<string[]> {
  return ((await handle.fetchHistory()).events ?? []).map((event) => eventName(event.eventType));
}

describe('run intake and review timings (stub activities, real dev server)', () => {
  let connection: Connection;
  let client: Client;
  let workerConnection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `intake-timings-${Date.now()}`;
  let sequence = 0;

  beforeAll(async () => {
    // The process's runtime, as every in-process worker installs it (the SDK allows one per process).
    installWorkerRuntime(createLogger('warn'));
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection });
    workerConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
    worker = await Worker.create({
      connection: workerConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities: stubs,
    });
    running = worker.run();
  }, 60_000);

  afterAll(async () => {
    if (worker) {
      worker.shutdown();
      await running;
    }
    await workerConnection?.close();
    await connection?.close();
  });

  const startIntake = (input: Omit<RunIntakeInput, 'tenantId' | 'agentId'>) =>
    client.workflow.start(INTAKE_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `intake/timings/agent-${sequence++}-${Date.now()}`,
      args: [{ tenantId: 'timings', agentId: 'agent', ...input } satisfies RunIntakeInput],
    });

  it('an intake idle for its idle timeout completes with what it recorded, on the timer', async () => {
    const handle = await startIntake({ idleTimeoutMs: 1_000 });
    await handle.signal(RUN_COMPLETED_SIGNAL, report('idle-1'));
    await handle.signal(RUN_COMPLETED_SIGNAL, report('idle-2'));
    const started = Date.now();
    expect(await handle.result()).toEqual({ recorded: 2 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(calls.recorded).toEqual(expect.arrayContaining([report('idle-1'), report('idle-2')]));
    const events = await eventTypes(handle);
    // The idle timeout is a timer that fired, and the intake ended itself (no continue-as-new).
    expect(events).toContain('EVENT_TYPE_TIMER_FIRED');
    expect(events.at(-1)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
  }, 20_000);

  it('past its history limit the intake continues as new carrying the reports it has not recorded yet', async () => {
    // 150 pending reports: the first run records one batch of 100, then (history over the
    // limit) continues as new with the other 50, which the next run records.
    const pending = Array.from({ length: 150 }, (_, index) => report(`can-${index}`));
    const handle = await startIntake({ pending, historyLimit: 1, idleTimeoutMs: 1_000 });
    const firstRunId = handle.firstExecutionRunId;
    expect(await handle.result()).toEqual({ recorded: 0 });
    // Each report recorded exactly once, in order, across the runs.
    expect(calls.recorded.filter((recorded) => (recorded as { runId: string }).runId.startsWith('can-'))).toEqual(pending);

    const first = await client.workflow.getHandle(handle.workflowId, firstRunId).fetchHistory();
    const last = first.events!.at(-1)!;
    expect(eventName(last.eventType)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    const secondRunId = last.workflowExecutionContinuedAsNewEventAttributes!.newExecutionRunId!;
    expect(secondRunId).not.toBe(firstRunId);
    const carried = client.options.loadedDataConverter.payloadConverter.fromPayload<RunIntakeInput>(
      last.workflowExecutionContinuedAsNewEventAttributes!.input!.payloads![0]!,
    );
    expect(carried.pending).toEqual(pending.slice(100));
    expect((await handle.describe()).runId).not.toBe(firstRunId);
  }, 20_000);

  it('a batch review: an LLM review that outlives its deadline is recorded as failed once; the others in its batch complete', async () => {
    const stamp = Date.now();
    const slow = `slow-${stamp}`;
    const quick = `review-${stamp}`;
    const trackOnly = `track-${stamp}`;
    // Pending reports are recorded as one batch, so their reviews are one runReviews execution.
    const handle = await startIntake({
      pending: [report(slow), report(quick), report(trackOnly)],
      idleTimeoutMs: 1_000,
      reviewDeadlineMs: 2_000,
    });
    await handle.result();

    const started = Date.now();
    const review = client.workflow.getHandle(reviewBatchWorkflowId('timings', [slow, quick]));
    expect(review.workflowId).toMatch(new RegExp(`^review/timings/review-${stamp}\\.\\.slow-${stamp}\\+2-[0-9a-f]{8}$`));
    expect(await review.result()).toEqual({ completed: 1, failed: 1, skipped: 0 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(calls.failed.filter((failure) => failure.runId === slow)).toEqual([
      { tenantId: 'timings', runId: slow, error: 'ReviewDeadlineExceeded: not finished within 2000 ms' },
    ]);
    expect(calls.finished.filter((finished) => finished.runId === slow)).toEqual([]);
    expect(calls.finished.filter((finished) => finished.runId === quick)).toEqual([
      { tenantId: 'timings', runId: quick, decision: 'none' },
    ]);
    expect(calls.failed.filter((failure) => failure.runId === quick)).toEqual([]);
    // The deadline is the workflow's own timer (CancellationScope.withTimeout), not an activity timeout.
    const reviewEvents = await eventTypes(review);
    expect(reviewEvents).toContain('EVENT_TYPE_TIMER_FIRED');
    expect(reviewEvents).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED');
  }, 20_000);

  it('a batch review: a run whose track record fails is recorded as failed alone; the rest of the batch completes', async () => {
    const stamp = Date.now();
    const runIds = [`missing-${stamp}`, `track-a-${stamp}`, `track-b-${stamp}`];
    // Started the way the intake starts it (the intake's stub reviews only `review-` and `slow-` runs).
    const review = await client.workflow.start('runReviews', {
      taskQueue,
      workflowId: reviewBatchWorkflowId('timings', runIds),
      args: [{ tenantId: 'timings', runIds }],
    });
    expect(await review.result()).toEqual({ completed: 2, failed: 1, skipped: 0 });
    expect(calls.failed.filter((failure) => failure.runId === runIds[0])).toEqual([
      { tenantId: 'timings', runId: runIds[0], error: expect.stringContaining('ReviewedRunMissing') },
    ]);
    expect(calls.finished.filter((finished) => runIds.includes(finished.runId))).toEqual([
      { tenantId: 'timings', runId: runIds[1], decision: 'track_record_only' },
      { tenantId: 'timings', runId: runIds[2], decision: 'track_record_only' },
    ]);
  }, 20_000);
});
