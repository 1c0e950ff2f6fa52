/** The intake workflow's names and input: shared by the workflow and its clients. */

export const INTAKE_WORKFLOW_TYPE = 'runIntake';

/** Temporal refuses payloads over 2 MiB; keep headroom for the signal's or the activity's envelope. */
export const MAX_REPORT_PAYLOAD_BYTES = 2 * 1024 * 1024 - 64 * 1024;
/** Carries a whole run report (agent runtimes over Temporal). */
export const RUN_COMPLETED_SIGNAL = 'runCompleted';
/** Carries only a reference to a run already stored (the HTTP API stores first). */
export const RUN_STORED_SIGNAL = 'runStored';

export interface StoredRunReference {
  runId: string;
}

export interface RunIntakeInput {
  tenantId: string;
  agentId: string;
  /** Reports received but not yet recorded when the previous run continued as new. */
  pending?: unknown[];
  /** Stored runs signalled but not yet handed to review when the previous run continued as new. */
  pendingStored?: string[];
  /** Continue as new past this many history events (default 4,000). */
  historyLimit?: number;
  /** End after this long without a report (default 10 minutes); tests shorten it. */
  idleTimeoutMs?: number;
  /** The deadline of each review this intake starts (default 15 minutes); tests shorten it. */
  reviewDeadlineMs?: number;
}

/** Readable in the Temporal UI: one long-lived intake per agent. */
export function intakeWorkflowId(tenantId: string, agentId: string): string {
  return `intake/${tenantId}/${agentId}`;
}

export function reviewWorkflowId(tenantId: string, runId: string): string {
  return `review/${tenantId}/${runId}`;
}
