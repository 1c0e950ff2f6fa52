/**
 * What a failure comes down to. Temporal wraps an activity's error twice on its way out
 * (WorkflowFailedError → ActivityFailure → ApplicationFailure, a child workflow adds one more),
 * and each wrapper's message is generic ("Workflow execution failed", "Activity task failed"):
 * the reason is the innermost cause, typed by an ApplicationFailure's `type` (a SkillsmithError's
 * stable code, via failFast) or else the error's name.
 */
export interface FailureCause {
  type: string;
  message: string;
}

// Only Temporal's wrappers are seen through: our own errors already say why in their message.
// A cause that crossed the wire arrives as a bare TemporalFailure; its type is on the
// ApplicationFailure around it.
const TEMPORAL_WRAPPERS = new Set([
  'WorkflowFailedError',
  'ActivityFailure',
  'ChildWorkflowFailure',
  'ApplicationFailure',
  'TemporalFailure',
]);

function failureType(error: Error): string | undefined {
  const type = (error as { type?: unknown }).type;
  return typeof type === 'string' && type ? type : undefined;
}

export function failureCause(error: unknown): FailureCause {
  if (!(error instanceof Error)) return { type: 'Error', message: String(error) };
  let current = error;
  let type = failureType(current);
  while (TEMPORAL_WRAPPERS.has(current.name) && current.cause instanceof Error) {
    current = current.cause;
    type = failureType(current) ?? type;
  }
  return { type: type ?? current.name ?? 'Error', message: current.message };
}

/** `EmbeddingModelUnavailable: no model at …`: the cause as one line for records and terminals. */
export function describeFailure(error: unknown): string {
  const { type, message } = failureCause(error);
  return `${type}: ${message.split('\n')[0]}`;
}

/**
 * The cause back from a record's `failed: Type: message` outcome (as describeFailure wrote it),
 * so machine output carries the type and the message apart; undefined for any other outcome.
 */
export function recordedFailure(outcome: string | null): FailureCause | undefined {
  const match = /^failed: ([A-Za-z_][\w.]*): (.*)$/s.exec(outcome ?? '');
  return match ? { type: match[1]!, message: match[2]! } : undefined;
}
