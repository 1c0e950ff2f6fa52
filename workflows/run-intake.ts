import {
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  log,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities/index.ts';
import { RUN_COMPLETED_SIGNAL, reviewWorkflowId, type RunIntakeInput } from '../src/client/intake-contract.ts';
import { runReview } from './run-review.ts';

const { recordRuns } = proxyActivities<Activities>({
  summary: 'record reported runs',
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 20 },
});

export const runCompletedSignal = defineSignal<[unknown]>(RUN_COMPLETED_SIGNAL);

/** Reports recorded per activity call: batching is what lets one agent's intake keep up. */
export const BATCH_SIZE = 100;
/** An idle intake ends; the next report starts it again (signalWithStart). */
export const IDLE_TIMEOUT = '10 minutes';
/** Continue as new well before history limits (or when the server suggests it). */
export const MAX_HISTORY_EVENTS = 4_000;

/**
 * The intake of one agent's finished runs (id `intake/<tenant>/<agent>`), fed by the
 * `runCompleted` signal: records each run through an idempotent activity and starts the
 * background review of a run at most once, as a child that outlives the intake.
 */
export async function runIntake(input: RunIntakeInput): Promise<{ recorded: number }> {
  const queue: unknown[] = [...(input.pending ?? [])];
  setHandler(runCompletedSignal, (report) => {
    queue.push(report);
  });
  let recorded = 0;
  for (;;) {
    if (!(await condition(() => queue.length > 0, input.idleTimeoutMs ?? IDLE_TIMEOUT))) return { recorded };
    const batch = queue.splice(0, BATCH_SIZE);
    const result = await recordRuns({ tenantId: input.tenantId, agentId: input.agentId, reports: batch });
    recorded += result.inserted;
    await Promise.all(
      result.review.map((runId) =>
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
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > (input.historyLimit ?? MAX_HISTORY_EVENTS)) {
      await condition(allHandlersFinished);
      return await continueAsNew<typeof runIntake>({ ...input, pending: queue });
    }
  }
}
