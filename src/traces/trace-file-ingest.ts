import { readFile } from 'node:fs/promises';
import { requireReadableFile } from '../input/input-file.ts';
import { TextDecoder } from 'node:util';
import type pg from 'pg';
import { decodeJsonLine, readRawLines } from '../input/jsonl-lines.ts';
import {
  decodeRunReportValue,
  ingestReportSource,
  type IngestOptions,
  type IngestResult,
  type SourceRecord,
} from '../runs/jsonl-ingest.ts';
import { parseRunReport } from '../runs/run-report.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { jsonDepthExcess } from '../input/storable-text.ts';
import { convertOtelTrace, readOtlpSpans, type OtelSpan } from './otel-genai.ts';
import { convertTraceAs, MAX_TRACE_DEPTH } from './trace-document.ts';
import { detectRecordFormat, formatMisfit, UNRECOGNISED_RECORD } from './trace-format-detection.ts';
import type { ConvertedRun, IngestFormat, RecordFormat, TraceConversion, TraceFormat } from './trace-run.ts';

/**
 * `skillsmith ingest --format openai|anthropic|otel|auto FILE`: a file of traces, one record a
 * line (JSONL, as agents and the OTel collector's file exporter write them) or one JSON
 * document (pretty-printed, as an API response is saved), converted to run reports and ingested
 * like a run report file — all or nothing unless `--skip-invalid`, every error named by its line
 * and record. OTel spans are grouped by traceId across the whole file (an exporter writes a trace's
 * spans in several batches), so unlike run report files a trace file is converted in memory.
 */

/** Trace files are converted in memory; a bigger one is refused before it is read. */
export const MAX_TRACE_FILE_BYTES = 256 * 1024 * 1024;

/** A CLI input error (never reaches the API): its code is what `--json` prints. */
export class TraceFileTooLarge extends SkillsmithError {
  static override readonly code = 'TraceFileTooLarge';
}

export interface TraceIngestOptions extends IngestOptions {
  format: Exclude<IngestFormat, 'run-report'>;
  /** `--agent`: the agentId of every converted run (else the trace's own agent name, else the format's name). */
  agentId?: string;
}

interface ParsedRecord {
  line: number;
  value: unknown;
}

type ReadLine = { line: number; kind: 'blank' } | { line: number; kind: 'invalid'; reason: string } | ({ kind: 'value' } & ParsedRecord);

async function readLines(file: string): Promise<ReadLine[]> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const lines: ReadLine[] = [];
  for await (const raw of readRawLines(file, () => {})) {
    const decoded = decodeJsonLine(raw, decoder);
    lines.push(decoded.kind === 'value' ? { line: raw.number, kind: 'value', value: decoded.value } : { line: raw.number, ...decoded });
  }
  // A pretty-printed document is not JSON line by line: read whole, it is one record.
  const first = lines.find((line) => line.kind !== 'blank');
  if (first?.kind === 'invalid' && lines.length > 1) {
    try {
      const value = JSON.parse(await readFile(file, 'utf8')) as unknown;
      return [
        { line: first.line, kind: 'value', value },
        { line: lines.length, kind: 'blank' },
      ];
    } catch {
      // Not one document either: the line errors stand.
    }
  }
  return lines;
}

/** Converted runs as source records: each validated against the run report contract, as a line would be. */
function recordsOfConversion(line: number, format: TraceFormat, conversion: TraceConversion): SourceRecord[] {
  if (!conversion.success) {
    const { record, reason } = conversion.refusal;
    return [{ line, kind: 'invalid', errors: [{ path: record, reason, format, record }] }];
  }
  return conversion.runs.map(({ record, report }: ConvertedRun): SourceRecord => {
    const parsed = parseRunReport(report);
    if (!parsed.success) return { line, kind: 'invalid', errors: parsed.issues.map((issue) => ({ ...issue, format, record })) };
    return { line, kind: 'report', report: parsed.report, bytes: Buffer.byteLength(JSON.stringify(parsed.report)) };
  });
}

/** Reads and converts a whole trace file into source records (sorted by line), counting the formats read. */
export async function convertTraceFile(
  file: string,
  options: TraceIngestOptions,
): Promise<{ records: SourceRecord[]; formats: Record<string, number> }> {
  const size = await requireReadableFile(file);
  if (size > MAX_TRACE_FILE_BYTES) {
    throw new TraceFileTooLarge(
      `${file} is ${size} bytes; a trace file is converted in memory and may be at most ${MAX_TRACE_FILE_BYTES} bytes (split it)`,
    );
  }
  const conversionOptions = {
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
    ...(options.agentId === undefined ? {} : { agentId: options.agentId }),
  };
  const records: SourceRecord[] = [];
  const formats: Record<string, number> = {};
  const count = (format: RecordFormat) => (formats[format] = (formats[format] ?? 0) + 1);
  const otelTraces = new Map<string, { line: number; spans: OtelSpan[] }>();

  for (const read of await readLines(file)) {
    if (read.kind !== 'value') {
      records.push(read.kind === 'blank' ? read : { line: read.line, kind: 'invalid', errors: [{ path: '(line)', reason: read.reason }] });
      continue;
    }
    const { line, value } = read;
    // Detection reads a record's top levels only; a run report's decoder bounds its depth itself, naming the field.
    const forced = options.format === 'auto' ? undefined : options.format;
    const format = forced ?? detectRecordFormat(value);
    if (format !== 'run-report' && jsonDepthExcess(value, MAX_TRACE_DEPTH) !== null) {
      records.push({ line, kind: 'invalid', errors: [{ path: '(line)', reason: `nests deeper than ${MAX_TRACE_DEPTH} levels` }] });
      continue;
    }
    if (format === null) {
      records.push({ line, kind: 'invalid', errors: [{ path: '(line)', reason: UNRECOGNISED_RECORD }] });
      continue;
    }
    count(format);
    if (format === 'run-report') {
      const decoded = decodeRunReportValue(value, options.tenantId);
      // A run report's errors are the contract's own, as the run report path prints them: no format named.
      records.push(
        decoded.kind === 'invalid' ? { line, ...decoded } : { line, ...decoded, bytes: Buffer.byteLength(JSON.stringify(decoded.report)) },
      );
    } else if (format === 'otel') {
      const spans = readOtlpSpans(value);
      if (!spans.success) {
        const reason = (forced && formatMisfit(value, forced, true)) || spans.refusal.reason;
        records.push({ line, kind: 'invalid', errors: [{ path: '(line)', reason, format }] });
        continue;
      }
      if (spans.spans.length === 0) {
        records.push({ line, kind: 'invalid', errors: [{ path: '(line)', reason: 'no spans in the export', format }] });
      }
      for (const span of spans.spans) {
        const trace = otelTraces.get(span.traceId) ?? { line, spans: [] };
        trace.spans.push(span);
        otelTraces.set(span.traceId, trace);
      }
    } else {
      const converted = recordsOfConversion(line, format, convertTraceAs(format, value, conversionOptions));
      // A forced format that does not fit says what the record reads as, not the fields it lacks for the forced one.
      const misfit = forced && converted.some((record) => record.kind === 'invalid') ? formatMisfit(value, forced, true) : undefined;
      records.push(
        ...(misfit === undefined
          ? converted
          : [{ line, kind: 'invalid' as const, errors: [{ path: '(record)', reason: misfit, format }] }]),
      );
    }
  }
  for (const [traceId, { line, spans }] of otelTraces) {
    records.push(...recordsOfConversion(line, 'otel', convertOtelTrace(traceId, spans, conversionOptions)));
  }
  records.sort((left, right) => left.line - right.line);
  return { records, formats };
}

/** Converts a trace file and ingests its runs; the result says which formats were read. */
export async function ingestTraceFile(pool: pg.Pool, file: string, options: TraceIngestOptions): Promise<IngestResult> {
  const totalBytes = await requireReadableFile(file);
  options.onProgress?.({ phase: 'validate', bytesRead: 0, totalBytes });
  const { records, formats } = await convertTraceFile(file, options);
  options.onProgress?.({ phase: 'validate', bytesRead: totalBytes, totalBytes });
  const source = {
    async *records() {
      yield* records;
    },
  };
  const result = await ingestReportSource(pool, file, source, options);
  options.onProgress?.({ phase: 'ingest', bytesRead: totalBytes, totalBytes });
  return { ...result, format: options.format, formats };
}

/**
 * How `--format auto` reads a file: record by record, each in the format detected (run reports
 * among them), converted in memory — unless the file is over MAX_TRACE_FILE_BYTES and opens with a
 * run report: then it is streamed as run reports, at any size, as `--format run-report` would.
 */
export async function autoFileFormat(file: string): Promise<'run-report' | 'auto'> {
  if ((await requireReadableFile(file)) <= MAX_TRACE_FILE_BYTES) return 'auto';
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const raw of readRawLines(file, () => {})) {
    const decoded = decodeJsonLine(raw, decoder);
    if (decoded.kind === 'blank') continue;
    return decoded.kind === 'value' && detectRecordFormat(decoded.value) === 'run-report' ? 'run-report' : 'auto';
  }
  return 'auto';
}
