import {
  type ActivityOptions,
  CancellationScope,
  defineQuery,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ClusterPassGoalsResult } from '../activities/cluster.ts';
import type { Activities } from '../activities/index.ts';
import type { PassRecord } from '../src/contracts/pass-record.ts';
import {
  DEFAULT_HEARTBEAT_TIMEOUT_SECONDS,
  PASS_PROGRESS_QUERY,
  passWorkflowId,
  type PassProgress,
  type SynthesisPassInput,
} from '../src/contracts/pass-contract.ts';
import { synthesizeCluster } from './synthesize-cluster.ts';
import { retryPolicy } from './retry-policies.ts';
import { describeFailure } from '../src/contracts/failure-cause.ts';
import { PASS_STATUS_ATTRIBUTE, PASS_TENANT_ATTRIBUTE } from '../src/contracts/search-attributes.ts';

// Every step below but the children's LLM call retries long enough to outlast a database outage
// (retry-policies.ts); a retry policy is not part of the history's commands, so replays are unchanged.

// Bookkeeping on the passes table: short.
const { beginPass, recordPassCounts, finishPass } = proxyActivities<Activities>({
  summary: 'pass record',
  startToCloseTimeout: '30 seconds',
  retry: retryPolicy({ initialIntervalSeconds: 1 }),
});

const { extractRuns } = proxyActivities<Activities>({
  summary: 'extract runs since the last successful pass',
  startToCloseTimeout: '10 minutes',
  retry: retryPolicy({ initialIntervalSeconds: 2 }),
});

// Long and heartbeating: a lost worker is noticed within the heartbeat timeout (the pass's input
// sets it, 30 s by default), and a cancel reaches it.
const heartbeating = (options: Pick<ActivityOptions, 'summary' | 'startToCloseTimeout'>) => (heartbeatTimeoutSeconds: number) =>
  proxyActivities<Activities>({
    ...options,
    heartbeatTimeout: heartbeatTimeoutSeconds * 1000,
    retry: retryPolicy({ initialIntervalSeconds: 5 }),
  });

const embedActivities = heartbeating({ summary: 'embed goals without a cached embedding', startToCloseTimeout: '4 hours' });

// `clusterPassGoals` is the cluster step of histories recorded before SETTLE_IN_RECONCILE_PATCH (it
// also settled the unchanged clusters and chose the ones within the budget). Heartbeating while it
// computes (it hands the event loop back between components), so a lost worker costs the pass's
// heartbeat timeout, not minutes.
const clusterActivities = heartbeating({ summary: 'cluster runs and qualify clusters', startToCloseTimeout: '1 hour' });

// Database work over the pass's clusters, heartbeating per cluster.
const settleActivities = heartbeating({
  summary: 'reconcile: settle clusters that are unchanged procedures (NOOP)',
  startToCloseTimeout: '30 minutes',
});

// Reads the tenant's procedures and runs and writes its recall space in one transaction, heartbeating.
const recallSpaceActivities = heartbeating({
  summary: "recall space: whiten the tenant's goals, one class per procedure and per run of another job",
  startToCloseTimeout: '30 minutes',
});

const { selectPassClusters } = proxyActivities<Activities>({
  summary: 'choose the clusters within the budget, carried ones first',
  startToCloseTimeout: '5 minutes',
  retry: retryPolicy({ initialIntervalSeconds: 5 }),
});

/**
 * Histories recorded before it clustered, settled and selected in one `clusterPassGoals`; new
 * executions cluster, then settle in the reconcile step, then select.
 */
export const SETTLE_IN_RECONCILE_PATCH = 'settle-unchanged-clusters-in-reconcile-step';

/**
 * Histories recorded before a pass that left clusters pending past the LLM budget started its own
 * continuation; new executions start it.
 */
export const PASS_CONTINUATION_PATCH = 'pass-starts-its-continuation';

/** Histories recorded before a pass ended by building the tenant's recall space; new executions build it. */
export const RECALL_SPACE_PATCH = 'pass-builds-recall-space';

export const passProgressQuery = defineQuery<PassProgress>(PASS_PROGRESS_QUERY);

/**
 * One synthesis pass, id `synthesis/<tenant>/<iso-time>`: extract → embed → cluster → reconcile
 * settles the clusters that are unchanged procedures (NOOPs cost no budget) → one child
 * workflow per qualifying cluster (reconcile → distill → install), highest value first, the ones
 * earlier passes left pending before them — every one with the extractive distiller; with the LLM
 * at most maxClustersPerPass (the budget caps LLM calls), the rest staying pending (counted in the
 * record and the memo) for the pass's continuation: a pass it starts as an abandoned child, which
 * waits SKILLSMITH_PASS_CONTINUATION_DELAY_SECONDS and takes them first, so a backlog drains
 * without an operator. Last, the tenant's recall space is rebuilt from what it now knows
 * (src/recall/recall-space.ts). Only ids and counts travel through history. An unusable LLM stops the pass
 * before any further install (and starts no continuation); a failure or a cancel is recorded on
 * the pass before the workflow ends.
 */
export async function synthesisPass(input: SynthesisPassInput): Promise<PassRecord> {
  const { workflowId: passId, runId } = workflowInfo();
  const { tenantId } = input;
  const heartbeatTimeoutSeconds = input.heartbeatTimeoutSeconds ?? DEFAULT_HEARTBEAT_TIMEOUT_SECONDS;
  const { embedGoals } = embedActivities(heartbeatTimeoutSeconds);
  const { settleUnchangedClusters } = settleActivities(heartbeatTimeoutSeconds);
  const { clusterPassRuns, clusterPassGoals } = clusterActivities(heartbeatTimeoutSeconds);
  const { buildRecallSpace } = recallSpaceActivities(heartbeatTimeoutSeconds);
  const progress: PassProgress = { stage: 'starting', counts: {}, clustersDone: 0, clustersTotal: 0, outcome: null };
  setHandler(passProgressQuery, () => progress);
  // Only where the client found them registered: upserting an unknown attribute fails the task.
  const showStatus = (status: string) => {
    if (input.searchAttributes)
      upsertSearchAttributes([
        { key: PASS_TENANT_ATTRIBUTE, value: tenantId },
        { key: PASS_STATUS_ATTRIBUTE, value: status },
      ]);
  };
  showStatus('running');
  if (input.startDelaySeconds !== undefined) {
    // A continuation waits in the open, a timer in the UI, before it begins its record.
    progress.stage = 'waiting';
    upsertMemo({ tenantId, continues: input.continues ?? null, startDelaySeconds: input.startDelaySeconds });
    await sleep(input.startDelaySeconds * 1000);
    progress.stage = 'starting';
  }
  const finish = async (status: 'completed' | 'skipped' | 'failed' | 'cancelled', outcome: string | null) => {
    progress.stage = 'finishing';
    // A pass that ends early keeps the counts it reached (runs seen before its embed step failed).
    const reached = status === 'failed' || status === 'cancelled' ? { counts: progress.counts } : {};
    const record = await finishPass({ tenantId, passId, status, outcome, ...reached });
    progress.stage = 'done';
    progress.counts = record.counts;
    progress.outcome = record.outcome;
    upsertMemo({ tenantId, status: record.status, outcome: record.outcome, ...record.counts });
    showStatus(record.status);
    return record;
  };

  const begun = await beginPass({ tenantId, passId, workflowRunId: runId, full: input.full ?? false });
  upsertMemo({ tenantId, distiller: begun.distiller, since: begun.since });
  if (begun.disabled) return await finish('skipped', 'skipped: synthesis disabled');

  try {
    progress.stage = 'extracting';
    const extracted = await extractRuns({ tenantId, since: begun.since });
    progress.counts = { runsSeen: extracted.runsInWindow, sequences: extracted.successfulSequences };

    progress.stage = 'embedding';
    await embedGoals({ tenantId });

    progress.stage = 'clustering';
    const clusterInput = { tenantId, passId, since: extracted.since, until: extracted.until, full: input.full ?? false };
    let clustered: ClusterPassGoalsResult;
    if (patched(SETTLE_IN_RECONCILE_PATCH)) {
      const found = await clusterPassRuns(clusterInput);
      await settleUnchangedClusters({ tenantId, passId });
      clustered = { ...found, ...(await selectPassClusters({ tenantId, passId })) };
    } else {
      clustered = await clusterPassGoals(clusterInput);
    }
    // What waits past the budget is in the memo from here on (histories before it had no such count).
    const waiting = clustered.pendingCount === undefined ? {} : { pending: clustered.pendingCount, carried: clustered.carriedCount ?? 0 };
    progress.counts = { ...progress.counts, clusters: clustered.clusterCount, qualifying: clustered.qualifyingCount, ...waiting };
    progress.clustersTotal = clustered.clusterKeys.length;
    await recordPassCounts({ tenantId, passId, counts: progress.counts });
    upsertMemo({ ...progress.counts });

    progress.stage = 'distilling';
    let stoppedBecause: string | null = null;
    // One cluster at a time: each reconciles against what the previous ones installed.
    for (const clusterKey of clustered.clusterKeys) {
      const summary = clustered.clusterSummaries?.[clusterKey];
      const result = await executeChild(synthesizeCluster, {
        workflowId: `${passId}/cluster/${clusterKey}`,
        // The default is not written into the child's input: its history stays as before.
        args: [{ tenantId, passId, clusterKey, ...(input.heartbeatTimeoutSeconds === undefined ? {} : { heartbeatTimeoutSeconds }) }],
        ...(summary === undefined ? {} : { staticSummary: summary }),
      });
      progress.clustersDone += 1;
      if (result.decision === 'llm-unavailable') {
        stoppedBecause = `skipped: llm unavailable (${result.reason})`;
        break;
      }
    }
    // What recall tells a goal's job by, from what the tenant now knows (also after an LLM stop: it
    // may have installed some clusters first).
    if (patched(RECALL_SPACE_PATCH)) {
      progress.stage = 'recall-space';
      await buildRecallSpace({ tenantId, passId });
    }
    if (stoppedBecause) return await finish('skipped', stoppedBecause);
    const delaySeconds = clustered.continueAfterSeconds;
    if (delaySeconds === undefined || !patched(PASS_CONTINUATION_PATCH)) return await finish('completed', null);
    // Named for when it begins, as every pass is. The record is finished first: a continuation
    // takes over the pending clusters of completed passes.
    const continuationId = passWorkflowId(tenantId, new Date(Date.now() + delaySeconds * 1000));
    const pending = clustered.pendingCount ?? 0;
    const record = await finish(
      'completed',
      `continued by ${continuationId}: ${pending} clusters pending past the LLM budget (SKILLSMITH_MAX_CLUSTERS_PER_PASS)`,
    );
    upsertMemo({ continuedBy: continuationId });
    await startChild(synthesisPass, {
      workflowId: continuationId,
      args: [
        {
          tenantId,
          continues: passId,
          startDelaySeconds: delaySeconds,
          ...(input.searchAttributes === undefined ? {} : { searchAttributes: input.searchAttributes }),
          ...(input.heartbeatTimeoutSeconds === undefined ? {} : { heartbeatTimeoutSeconds }),
        },
      ],
      // It outlives this pass, which ends now.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `continues ${passId}: ${pending} clusters pending past the LLM budget, from ${delaySeconds} s after it`,
    });
    return record;
  } catch (error) {
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(() => finish('cancelled', 'cancelled'));
    } else {
      // The root cause (e.g. `EmbeddingModelUnavailable: …`), not Temporal's "Activity task failed".
      await finish('failed', `failed: ${describeFailure(error)}`);
    }
    throw error;
  }
}
