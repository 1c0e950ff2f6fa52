import { requireReadableFile } from '../input/input-file.ts';
import { TextDecoder } from 'node:util';
import type pg from 'pg';
import { parseRunReport, runReportSha256, type RunReport, type RunReportIssue } from './run-report.ts';
import { findStoredRunHashes, upsertRuns } from './run-repository.ts';
import { quoteRefused } from '../input/tool-name.ts';
import { decodeJsonLine, formatJsonlLineError, readRawLines, type JsonlLineError, type RawLine } from '../input/jsonl-lines.ts';

/**
 * Bulk import of run reports from a JSONL file, in two streaming passes (the file is never
 * held in memory):
 *  1. validate every line — UTF-8, JSON, the run report schema, the --tenant rule, duplicate
 *     runIds within the file, and conflicts with runs already stored;
 *  2. ingest the valid lines in batches (one short transaction each).
 * Any invalid line without `skipInvalid` → nothing is ingested and every error is returned.
 */

const BATCH_RUNS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
const CONFLICT_CHECK_BATCH = 1000;

/**
 * An ingest error: its line, the field path in the report (`toolCalls[3].tool`) or `(line)`, why,
 * the refused value; for a converted trace also the format it was read in and the record
 * (`trace <id>`, `response <id>`) the line held.
 */
export type IngestLineError = JsonlLineError & { format?: string; record?: string };

export interface IngestProgress {
  phase: 'validate' | 'ingest';
  bytesRead: number;
  totalBytes: number;
}

export interface IngestOptions {
  /** --tenant when given explicitly: the tenant of lines without tenantId; others must match it. */
  tenantId?: string;
  skipInvalid?: boolean;
  onProgress?: (progress: IngestProgress) => void;
  /**
   * For a record that is not a valid run report: why, when it is something else (a trace of
   * another format); that one reason replaces its field errors. Unset: the field errors stand.
   */
  misfit?: (value: unknown) => string | undefined;
}

export interface IngestResult {
  file: string;
  /** Lines in the file (blank lines are counted here and otherwise ignored). */
  lines: number;
  valid: number;
  invalid: number;
  inserted: number;
  unchanged: number;
  errors: IngestLineError[];
  /** `--format` as given (`run-report` unless a trace format or `auto` was asked for). */
  format?: string;
  /** With a trace format or `auto`: how many records were read in each format (what `auto` chose). */
  formats?: Record<string, number>;
}

type RecordIssue = RunReportIssue & { format?: string; record?: string };

/** One record of a source: a blank line, an invalid record (every reason), or a valid report and its size. */
export type SourceRecord = { line: number } & (
  { kind: 'blank' } | { kind: 'invalid'; errors: RecordIssue[] } | { kind: 'report'; report: RunReport; bytes: number }
);

/**
 * Where an ingest reads its records from: read once to validate, once more to ingest (so a JSONL
 * file is streamed twice rather than held in memory).
 */
export interface ReportSource {
  records(phase: IngestProgress['phase']): AsyncIterable<SourceRecord>;
}

/** Validates one decoded run report value; applies the --tenant rule. */
export function decodeRunReportValue(
  value: unknown,
  tenantId: string | undefined,
): { kind: 'invalid'; errors: RunReportIssue[] } | { kind: 'report'; report: RunReport } {
  if (tenantId !== undefined && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (record.tenantId === undefined) {
      record.tenantId = tenantId;
    } else if (typeof record.tenantId === 'string' && record.tenantId !== tenantId) {
      // Any other type is the report schema's to refuse (and never serialised here: it may be a hostile depth).
      return {
        kind: 'invalid',
        errors: [
          {
            path: 'tenantId',
            reason: `is ${JSON.stringify(record.tenantId)} but --tenant is ${JSON.stringify(tenantId)}`,
            value: quoteRefused(record.tenantId),
          },
        ],
      };
    }
  }
  const parsed = parseRunReport(value);
  if (!parsed.success) return { kind: 'invalid', errors: parsed.issues };
  return { kind: 'report', report: parsed.report };
}

type DecodedLine = { kind: 'blank' } | { kind: 'invalid'; errors: RunReportIssue[] } | { kind: 'report'; report: RunReport; bytes: number };

/** Decodes and validates one line; applies the --tenant rule. */
function decodeLine(raw: RawLine, decoder: TextDecoder, options: IngestOptions): DecodedLine {
  const line = decodeJsonLine(raw, decoder);
  if (line.kind !== 'value') return line.kind === 'blank' ? line : { kind: 'invalid', errors: [{ path: '(line)', reason: line.reason }] };
  const decoded = decodeRunReportValue(line.value, options.tenantId);
  if (decoded.kind === 'report') return { ...decoded, bytes: raw.length };
  const misfit = options.misfit?.(line.value);
  return misfit === undefined ? decoded : { kind: 'invalid', errors: [{ path: '(record)', reason: misfit }] };
}

/** The records of a JSONL file of run reports, one a line. */
function jsonlReportSource(
  file: string,
  options: IngestOptions,
  onBytes: (phase: IngestProgress['phase'], bytesRead: number) => void,
): ReportSource {
  return {
    async *records(phase) {
      const decoder = new TextDecoder('utf-8', { fatal: true });
      for await (const raw of readRawLines(file, (bytesRead) => onBytes(phase, bytesRead))) {
        yield { line: raw.number, ...decodeLine(raw, decoder, options) };
      }
    },
  };
}

interface PendingConflictCheck {
  index: number;
  line: number;
  runId: string;
  contentSha256: string;
}

/** Runs the ingest of one file. Never throws for bad lines; throws for I/O and database failures. */
export async function ingestJsonlFile(pool: pg.Pool, file: string, options: IngestOptions = {}): Promise<IngestResult> {
  const totalBytes = await requireReadableFile(file);
  const source = jsonlReportSource(file, options, (phase, bytesRead) => options.onProgress?.({ phase, bytesRead, totalBytes }));
  return ingestReportSource(pool, file, source, options);
}

/**
 * Ingests the records of a source, all or nothing unless `skipInvalid`: every record is
 * validated first (the contract, duplicate runIds within the source, conflicts with runs already
 * stored), then the valid ones are written in batches (one short transaction each).
 */
export async function ingestReportSource(
  pool: pg.Pool,
  file: string,
  source: ReportSource,
  options: IngestOptions = {},
): Promise<IngestResult> {
  // Pass 1: validate everything.
  const errors: IngestLineError[] = [];
  // Records are told apart by their position in the source (a trace line can hold several runs).
  const invalidRecords = new Set<number>();
  const firstLineOfRun = new Map<string, number>();
  const pendingChecks = new Map<string, PendingConflictCheck[]>();
  let lines = 0;
  let valid = 0;

  const addErrors = (index: number, line: number, issues: readonly RecordIssue[]) => {
    if (!invalidRecords.has(index)) {
      invalidRecords.add(index);
      valid -= 1;
    }
    for (const issue of issues) errors.push({ line, ...issue });
  };
  const checkConflicts = async (tenantId: string) => {
    const pending = pendingChecks.get(tenantId) ?? [];
    pendingChecks.delete(tenantId);
    if (pending.length === 0) return;
    const stored = new Map(
      (
        await findStoredRunHashes(
          pool,
          tenantId,
          pending.map((check) => check.runId),
        )
      ).map((row) => [row.runId, row.contentSha256]),
    );
    for (const check of pending) {
      const storedSha256 = stored.get(check.runId);
      if (storedSha256 !== undefined && storedSha256 !== check.contentSha256) {
        addErrors(check.index, check.line, [
          {
            path: 'runId',
            reason: 'RunConflict: this run was already ingested with different content; a reported run cannot change',
            value: quoteRefused(check.runId),
          },
        ]);
      }
    }
  };

  let index = -1;
  for await (const decoded of source.records('validate')) {
    index += 1;
    lines = Math.max(lines, decoded.line);
    if (decoded.kind === 'blank') continue;
    valid += 1;
    if (decoded.kind === 'invalid') {
      addErrors(index, decoded.line, decoded.errors);
      continue;
    }
    const { tenantId, runId } = decoded.report;
    const key = `${tenantId}\u0000${runId}`;
    const firstLine = firstLineOfRun.get(key);
    if (firstLine !== undefined) {
      addErrors(index, decoded.line, [
        { path: 'runId', reason: `duplicates the runId of line ${firstLine} (a run appears once per file)`, value: quoteRefused(runId) },
      ]);
      continue;
    }
    firstLineOfRun.set(key, decoded.line);
    const pending = pendingChecks.get(tenantId) ?? [];
    pending.push({ index, line: decoded.line, runId, contentSha256: runReportSha256(decoded.report) });
    pendingChecks.set(tenantId, pending);
    if (pending.length >= CONFLICT_CHECK_BATCH) await checkConflicts(tenantId);
  }
  for (const tenantId of [...pendingChecks.keys()]) await checkConflicts(tenantId);
  firstLineOfRun.clear();
  errors.sort((left, right) => left.line - right.line);

  const result: IngestResult = { file, lines, valid, invalid: invalidRecords.size, inserted: 0, unchanged: 0, errors };
  if (invalidRecords.size > 0 && !options.skipInvalid) return result;
  if (valid === 0) return result;

  // Pass 2: ingest the valid lines, batch by batch.
  const batches = new Map<string, RunReport[]>();
  let batchRuns = 0;
  let batchBytes = 0;
  const flush = async () => {
    for (const [tenantId, reports] of batches) {
      const outcome = await upsertRuns(pool, tenantId, reports);
      result.inserted += outcome.inserted.length;
      result.unchanged += outcome.unchanged.length;
    }
    batches.clear();
    batchRuns = 0;
    batchBytes = 0;
  };
  index = -1;
  for await (const decoded of source.records('ingest')) {
    index += 1;
    if (invalidRecords.has(index)) continue;
    if (decoded.kind === 'blank') continue;
    if (decoded.kind === 'invalid') {
      // The file changed between the passes; refuse rather than guess.
      throw new Error(`${file} changed while it was being ingested (line ${decoded.line} is no longer valid)`);
    }
    const reports = batches.get(decoded.report.tenantId) ?? [];
    reports.push(decoded.report);
    batches.set(decoded.report.tenantId, reports);
    batchRuns += 1;
    batchBytes += decoded.bytes;
    if (batchRuns >= BATCH_RUNS || batchBytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return result;
}

/**
 * `line N: <field path>: <reason> (refused value <value>)`, the form the CLI prints; a converted
 * trace's error also names its format and record: `line N (otel): trace <id>: <reason>`.
 */
export function formatIngestError({ format, record, ...error }: IngestLineError): string {
  const text = formatJsonlLineError(error);
  const prefix = `line ${error.line}`;
  const named = `${prefix}${format === undefined ? '' : ` (${format})`}${record === undefined || record === error.path ? '' : `: ${record}`}`;
  return `${named}${text.slice(prefix.length)}`;
}
