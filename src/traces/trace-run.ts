import { createHash } from 'node:crypto';
import { MAX_GOAL_CHARS, MAX_RESULT_SUMMARY_CHARS, type RunReportInput, type RunStatus } from '../runs/run-report.ts';

/**
 * What every trace converter shares: the formats, the outcome of a conversion, and the few rules
 * that make a run report out of a foreign trace the same way whichever format it came in —
 * goal and result texts bounded to the contract, arguments decoded, a runId derived from the
 * source so that re-ingesting the same trace changes nothing.
 */

export const TRACE_FORMATS = ['openai', 'anthropic', 'otel'] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];
/** What `ingest --format` and `POST /v1/runs?format=` take; `run-report` is the run report contract itself. */
export const INGEST_FORMATS = ['auto', 'run-report', ...TRACE_FORMATS] as const;
export type IngestFormat = (typeof INGEST_FORMATS)[number];
/** A format a record was read in (what `auto` chose, or what was asked for). */
export type RecordFormat = Exclude<IngestFormat, 'auto'>;

/** Applied to every run a converter makes. */
export interface TraceConversionOptions {
  /** The agent the runs belong to; without it the trace's own agent name, else the format's name. */
  agentId?: string;
  tenantId?: string;
}

/** One run made from a trace, and which record of the trace it came from (`trace <id>`, a response id, …). */
export interface ConvertedRun {
  record: string;
  report: RunReportInput;
}

/** Why a record makes no run: which record (`trace <id>`, `response resp_…`, or `(record)`) and why. */
export interface TraceRefusal {
  record: string;
  reason: string;
}

/** When a trace carries no time (Anthropic messages never do): fixed, so a re-ingest is "unchanged". */
export const UNKNOWN_TIME = '1970-01-01T00:00:00.000Z';

const RUN_ID_MAX_CHARS = 128;

/** Canonical JSON (sorted keys), so a record's hash does not depend on how it was spaced or ordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The runId of a converted run: `<format>:<source id>` when the trace names itself (a response id,
 * a trace id), else `<format>:sha256-<first 32 hex of the record's canonical JSON>`. Either way the
 * same record always gets the same runId, which is what makes a re-ingest idempotent.
 */
export function deriveRunId(format: TraceFormat, sourceId: string | undefined, record: unknown): string {
  if (sourceId !== undefined && sourceId.length > 0) {
    const named = `${format}:${sourceId}`;
    if (named.length <= RUN_ID_MAX_CHARS) return named;
  }
  return `${format}:sha256-${createHash('sha256').update(canonicalJson(record), 'utf8').digest('hex').slice(0, 32)}`;
}

/** Text cut to `limit` characters (code points kept whole), marked with a trailing ellipsis when cut. */
export function boundText(text: string, limit: number): string {
  const characters = [...text];
  if (characters.length <= limit) return text;
  return `${characters.slice(0, limit - 1).join('')}…`;
}

/** A goal from the first user message: trimmed, bounded to the contract's limit; undefined when empty. */
export function goalFromText(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed ? boundText(trimmed, MAX_GOAL_CHARS) : undefined;
}

/** A tool result as the run report keeps it: text as is, anything else as JSON, bounded to resultSummary's limit. */
export function summarizeResult(result: unknown): string | undefined {
  if (result === undefined || result === null) return undefined;
  const text = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
  return text.length === 0 ? undefined : boundText(text, MAX_RESULT_SUMMARY_CHARS);
}

/**
 * Tool arguments as the run report keeps them (an object): function-calling APIs send a JSON
 * string, which is decoded; a value that is not an object is kept under `value`, and a string
 * that is not JSON (a model can emit one) under `arguments`, so nothing the agent sent is lost.
 */
export function decodeToolArguments(raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw) as unknown;
    } catch {
      return { arguments: raw };
    }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  return { value };
}

/** Seconds since the epoch (what OpenAI's `created` fields hold) as ISO-8601. */
export function isoFromUnixSeconds(seconds: number | undefined): string | undefined {
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export interface TraceToolCall {
  tool: string;
  args?: Record<string, unknown>;
  result?: unknown;
  success: boolean;
  error?: string;
  durationMs?: number;
  at?: string;
}

/**
 * A call as the model made it, before its result is seen: failed until a result answers it (a
 * transcript that ends before the result did not finish that call).
 */
export function unansweredToolCall(tool: string, rawArguments: unknown, missing: string): TraceToolCall {
  const args = decodeToolArguments(rawArguments);
  return { tool, ...(args ? { args } : {}), success: false, error: missing };
}

/** A result answers its call: the call succeeded, with the result (when there is one) kept. */
export function answerToolCall(call: TraceToolCall | undefined, result: string | undefined): void {
  if (call === undefined) return;
  call.success = true;
  delete call.error;
  if (result !== undefined) call.result = result;
}

/** Assembles the run report every converter returns, applying the options (agent, tenant). */
export function traceRunReport(
  format: TraceFormat,
  fields: {
    runId: string;
    goal: string;
    status: RunStatus;
    agentId?: string;
    startedAt?: string;
    completedAt?: string;
    toolCalls: readonly TraceToolCall[];
  },
  options: TraceConversionOptions,
): RunReportInput {
  const startedAt = fields.startedAt ?? fields.completedAt ?? UNKNOWN_TIME;
  return {
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
    agentId: options.agentId ?? fields.agentId ?? format,
    runId: fields.runId,
    goal: fields.goal,
    status: fields.status,
    startedAt,
    completedAt: fields.completedAt ?? startedAt,
    toolCalls: fields.toolCalls.map(({ tool, args, result, success, error, durationMs, at }) => {
      const resultSummary = summarizeResult(result);
      return {
        tool,
        ...(args === undefined ? {} : { args }),
        ...(resultSummary === undefined ? {} : { resultSummary }),
        success,
        ...(error === undefined ? {} : { error: boundText(error, MAX_RESULT_SUMMARY_CHARS) }),
        ...(durationMs === undefined ? {} : { durationMs }),
        ...(at === undefined ? {} : { at }),
      };
    }),
  };
}

export type TraceConversion = { success: true; runs: ConvertedRun[] } | { success: false; refusal: TraceRefusal };

export const refuse = (record: string, reason: string): TraceConversion => ({ success: false, refusal: { record, reason } });
