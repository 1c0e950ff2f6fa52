import { hasAnthropicMarkers } from './anthropic-messages.ts';
import { isResponsesTranscript } from './openai-transcript.ts';
import type { RecordFormat } from './trace-run.ts';

/**
 * What `--format auto` reads a record as, from the shape each format's specification gives it:
 * `resourceSpans` is an OTLP export; `toolCalls` a run report; `input`/`output` items or
 * `function_call` items an OpenAI Responses transcript; `tool_use`/`tool_result` blocks (or a
 * top-level `system`, `stop_reason`) Anthropic Messages; other `messages` (`tool_calls`,
 * `role: "tool"`) OpenAI Chat Completions. Null when the record is none of them.
 */
export function detectRecordFormat(value: unknown): RecordFormat | null {
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    if (value.length === 0 || !value.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item))) return null;
    if (isResponsesTranscript(value)) return 'openai';
    if (hasAnthropicMarkers(value)) return 'anthropic';
    return value.every((item) => typeof (item as { role?: unknown }).role === 'string') ? 'openai' : null;
  }
  if ('resourceSpans' in value) return 'otel';
  if ('toolCalls' in value) return 'run-report';
  if (isResponsesTranscript(value)) return 'openai';
  if (Array.isArray((value as { messages?: unknown }).messages)) return hasAnthropicMarkers(value) ? 'anthropic' : 'openai';
  return null;
}

/** The refusal reason for a record `auto` cannot place. */
export const UNRECOGNISED_RECORD =
  'not a recognised record: expected a run report (toolCalls), an OpenAI transcript (messages, or Responses input/output items), Anthropic messages (tool_use/tool_result blocks) or an OTLP JSON export (resourceSpans)';

const FORMAT_NAMES: Record<RecordFormat, string> = {
  'run-report': 'a run report',
  openai: 'an OpenAI transcript',
  anthropic: 'Anthropic messages',
  otel: 'an OTLP JSON export',
};

/**
 * Why a record that did not read as `expected` does not: it reads as another format (what
 * `auto` detects it as). `forced`: `--format expected` was given; otherwise `auto` chose it for
 * the whole of a file too big to read record by record, from its first record. Undefined when the
 * record reads as `expected` or as no format at all (its own errors then say what is wrong with it).
 */
export function formatMisfit(value: unknown, expected: RecordFormat, forced: boolean): string | undefined {
  const detected = detectRecordFormat(value);
  if (detected === null || detected === expected) return undefined;
  const remedy = forced
    ? `pass --format ${detected}, or leave --format out (auto detects it)`
    : `a file over the size auto reads record by record that opens with ${FORMAT_NAMES[expected]} is read as such: put the others in a file of their own`;
  return `reads as ${FORMAT_NAMES[detected]} (${detected}), not ${FORMAT_NAMES[expected]}: ${remedy}`;
}
