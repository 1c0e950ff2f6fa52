/** The intake workflow's names and input: shared by the workflow and its clients. */

export const INTAKE_WORKFLOW_TYPE = 'runIntake';

/** Temporal refuses payloads over 2 MiB; keep headroom for the signal's or the activity's envelope. */
export const MAX_REPORT_PAYLOAD_BYTES = 2 * 1024 * 1024 - 64 * 1024;
/** Carries a whole run report (agent runtimes over Temporal). */
export const RUN_COMPLETED_SIGNAL = 'runCompleted';
/** Carries only a reference to a run already stored (the HTTP API stores first). */
export const RUN_STORED_SIGNAL = 'runStored';

/** Carries the ids of several runs already stored (the HTTP API signals what arrived together once). */
export const RUNS_STORED_SIGNAL = 'runsStored';

export interface StoredRunReference {
  runId: string;
}

export interface StoredRunReferences {
  runIds: string[];
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

/**
 * The review of one intake batch, readable in the Temporal UI: one run keeps its run's review id;
 * several read `review/<tenant>/<first>..<last>+<count>-<hash>` (ids sorted; the hash of the whole
 * set makes an id name exactly one set of runs, so a batch is never mistaken for another).
 */
export function reviewBatchWorkflowId(tenantId: string, runIds: readonly string[]): string {
  if (runIds.length === 1) return reviewWorkflowId(tenantId, runIds[0]!);
  const sorted = [...runIds].sort();
  return `review/${tenantId}/${sorted[0]}..${sorted.at(-1)}+${sorted.length}-${fnv1a(sorted.join('\n'))}`;
}

/** 32-bit FNV-1a as 8 hex digits: deterministic, so the workflow can compute it. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
