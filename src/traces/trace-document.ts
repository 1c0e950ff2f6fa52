import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { jsonDepthExcess } from '../input/storable-text.ts';
import { convertAnthropicMessages } from './anthropic-messages.ts';
import { convertOpenAiTranscript } from './openai-transcript.ts';
import { convertOtlpExport } from './otel-genai.ts';
import { detectRecordFormat, UNRECOGNISED_RECORD } from './trace-format-detection.ts';
import { refuse, type IngestFormat, type TraceConversion, type TraceConversionOptions, type TraceFormat } from './trace-run.ts';

/**
 * One trace document (a request body, one JSONL line) in a given format, or `auto`, as runs.
 * Deeply nested JSON is refused before any schema walks it (as the run report contract does).
 */

/** Deeper than any transcript or OTLP export needs (OTLP's kvlist values nest ~10 levels above the content). */
export const MAX_TRACE_DEPTH = 128;

export type TraceDocumentConversion = TraceConversion & { format: TraceFormat | null };

export function convertTraceAs(format: TraceFormat, value: unknown, options: TraceConversionOptions): TraceConversion {
  if (format === 'openai') return convertOpenAiTranscript(value, options);
  if (format === 'anthropic') return convertAnthropicMessages(value, options);
  return convertOtlpExport(value, options);
}

/** Converts `value` read as `format` (`auto`: detected); `format` is what it was read as (null: not recognised). */
export function convertTraceDocument(
  value: unknown,
  format: Exclude<IngestFormat, 'run-report'>,
  options: TraceConversionOptions = {},
): TraceDocumentConversion {
  if (jsonDepthExcess(value, MAX_TRACE_DEPTH) !== null) {
    return { format: null, ...refuse('(record)', `nests deeper than ${MAX_TRACE_DEPTH} levels`) };
  }
  const detected = format === 'auto' ? detectRecordFormat(value) : format;
  if (detected === null) return { format: null, ...refuse('(record)', UNRECOGNISED_RECORD) };
  if (detected === 'run-report') {
    return { format: null, ...refuse('(record)', 'is a run report: post it without a format (or with format=run-report)') };
  }
  return { format: detected, ...convertTraceAs(detected, value, options) };
}

/** A trace that makes no run (no goal, no tool calls, not the format asked for): which record and why. */
export class TraceNotConvertible extends SkillsmithError {
  static override readonly code = 'TraceNotConvertible';
  static override readonly httpStatus = 422;
  constructor(
    readonly format: string,
    readonly record: string,
    readonly reason: string,
  ) {
    super(`cannot convert the ${format} trace to a run report: ${record}: ${reason}`);
  }
}
