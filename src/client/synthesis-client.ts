import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  WorkflowIdReusePolicy,
  type Client,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import {
  PASS_PROGRESS_QUERY,
  passScheduleId,
  passWorkflowId,
  SYNTHESIS_WORKFLOW_TYPE,
  type PassProgress,
  type SynthesisPassInput,
} from '../contracts/pass-contract.ts';
import type { PassRecord } from '../contracts/pass-record.ts';
import { passSearchAttributesRegistered } from './pass-search-attributes.ts';

/** Starting, watching and scheduling synthesis passes: the Temporal side of the CLI and of tools. */

/** The pass's heartbeat timeout when one is set (config.synthesis.heartbeatTimeoutSeconds); none: the workflow's default. */
function heartbeatInput(heartbeatTimeoutSeconds: number | undefined): Pick<SynthesisPassInput, 'heartbeatTimeoutSeconds'> {
  return heartbeatTimeoutSeconds === undefined ? {} : { heartbeatTimeoutSeconds };
}

export async function startSynthesisPass(
  client: Client,
  options: { tenantId: string; full: boolean; taskQueue: string; now?: Date; heartbeatTimeoutSeconds?: number },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const searchAttributes = await passSearchAttributesRegistered(client);
  const input: SynthesisPassInput = {
    tenantId: options.tenantId,
    full: options.full,
    ...(searchAttributes ? { searchAttributes } : {}),
    ...heartbeatInput(options.heartbeatTimeoutSeconds),
  };
  return client.workflow.start(SYNTHESIS_WORKFLOW_TYPE, {
    taskQueue: options.taskQueue,
    workflowId: passWorkflowId(options.tenantId, options.now ?? new Date()),
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: [input],
    memo: { tenantId: options.tenantId, full: options.full },
    staticSummary: `synthesis pass for tenant ${options.tenantId}${options.full ? ' (full)' : ''}`,
  });
}

export async function queryPassProgress(handle: WorkflowHandle): Promise<PassProgress> {
  return handle.query<PassProgress>(PASS_PROGRESS_QUERY);
}

export async function passResult(handle: WorkflowHandle): Promise<PassRecord> {
  return (await handle.result()) as PassRecord;
}

/** "24h", "90m", "30s", "1d" → a duration Temporal accepts; anything else is refused. */
export function parseEvery(every: string): string {
  const match = /^(\d+)(s|m|h|d)$/.exec(every.trim());
  if (!match || Number(match[1]) === 0)
    throw new Error(`invalid --every ${JSON.stringify(every)}: use a number and a unit, e.g. 24h, 90m, 1d`);
  return `${match[1]}${match[2]}`;
}

/** The inverse of parseEvery for what Temporal gives back (milliseconds): 86400000 → "24h". */
export function formatEvery(every: string): string {
  const ms = Number(every);
  if (!Number.isFinite(ms) || ms <= 0) return every;
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

export interface ScheduleDescription {
  scheduleId: string;
  every: string[];
  paused: boolean;
  note: string | null;
  nextActionTimes: string[];
  recentActions: Array<{ workflowId: string; scheduledAt: string }>;
}

/** Creates or replaces the tenant's schedule; overlapping passes are skipped, never queued. */
export async function setSynthesisSchedule(
  client: Client,
  options: { tenantId: string; every: string; taskQueue: string; heartbeatTimeoutSeconds?: number },
): Promise<void> {
  const scheduleId = passScheduleId(options.tenantId);
  const spec = { intervals: [{ every: parseEvery(options.every) }] };
  const searchAttributes = await passSearchAttributesRegistered(client);
  const action = {
    type: 'startWorkflow' as const,
    workflowType: SYNTHESIS_WORKFLOW_TYPE,
    taskQueue: options.taskQueue,
    workflowId: `${scheduleId}/scheduled`,
    args: [
      {
        tenantId: options.tenantId,
        full: false,
        ...(searchAttributes ? { searchAttributes } : {}),
        ...heartbeatInput(options.heartbeatTimeoutSeconds),
      } satisfies SynthesisPassInput,
    ],
    memo: { tenantId: options.tenantId, scheduled: true },
  };
  const handle = client.schedule.getHandle(scheduleId);
  try {
    await handle.update((previous) => ({
      ...previous,
      spec,
      action,
      policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP },
    }));
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      state: { note: `synthesis passes for tenant ${options.tenantId} every ${options.every}` },
    });
  }
}

export async function describeSynthesisSchedule(client: Client, tenantId: string): Promise<ScheduleDescription> {
  const description = await client.schedule.getHandle(passScheduleId(tenantId)).describe();
  return {
    scheduleId: description.scheduleId,
    every: description.spec.intervals?.map((interval) => String(interval.every)) ?? [],
    paused: description.state.paused,
    note: description.state.note ?? null,
    nextActionTimes: description.info.nextActionTimes.map((time) => time.toISOString()),
    recentActions: description.info.recentActions.map((action) => ({
      workflowId: action.action.workflow.workflowId,
      scheduledAt: action.scheduledAt.toISOString(),
    })),
  };
}

export async function pauseSynthesisSchedule(client: Client, tenantId: string, note: string): Promise<void> {
  await client.schedule.getHandle(passScheduleId(tenantId)).pause(note);
}

export async function resumeSynthesisSchedule(client: Client, tenantId: string): Promise<void> {
  await client.schedule.getHandle(passScheduleId(tenantId)).unpause();
}

export async function deleteSynthesisSchedule(client: Client, tenantId: string): Promise<void> {
  await client.schedule.getHandle(passScheduleId(tenantId)).delete();
}
