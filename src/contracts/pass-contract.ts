import type { PassCounts } from './pass-record.ts';

/** The synthesisPass workflow's input and progress query: shared by the workflow and its clients. */

export const SYNTHESIS_WORKFLOW_TYPE = 'synthesisPass';
export const PASS_PROGRESS_QUERY = 'progress';

export interface SynthesisPassInput {
  tenantId: string;
  /** All runs, not only those since the last completed pass. */
  full?: boolean;
  /** Upsert the tenant and the pass status as search attributes (only where they are registered). */
  searchAttributes?: boolean;
  /**
   * The heartbeat timeout of the pass's heartbeating activities (SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS of the
   * process that started it): how soon a lost worker is noticed. Absent (histories before it): the default.
   */
  heartbeatTimeoutSeconds?: number;
  /** A continuation: the pass that left clusters pending past the LLM budget and started this one. */
  continues?: string;
  /** Seconds the pass waits before it begins: a continuation's delay (SKILLSMITH_PASS_CONTINUATION_DELAY_SECONDS). */
  startDelaySeconds?: number;
}

/** How long a pass's heartbeating activity may go silent before Temporal retries it on another worker. */
export const DEFAULT_HEARTBEAT_TIMEOUT_SECONDS = 30;

export type PassStage =
  'waiting' | 'starting' | 'extracting' | 'embedding' | 'clustering' | 'distilling' | 'recall-space' | 'finishing' | 'done';

export interface PassProgress {
  stage: PassStage;
  counts: Partial<PassCounts>;
  clustersDone: number;
  clustersTotal: number;
  outcome: string | null;
}

/** Readable in the Temporal UI: `synthesis/<tenant>/<iso-time>`. */
export function passWorkflowId(tenantId: string, at: Date): string {
  return `synthesis/${tenantId}/${at.toISOString()}`;
}

/** The Temporal Schedule of a tenant's passes. */
export function passScheduleId(tenantId: string): string {
  return `synthesis/${tenantId}`;
}
