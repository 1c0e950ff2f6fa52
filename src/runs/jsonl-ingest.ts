import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { TextDecoder } from 'node:util';
import type pg from 'pg';
import { parseRunReport, runReportSha256, type RunReport, type RunReportIssue } from './run-report.ts';
import { findStoredRunHashes, upsertRuns } from './run-repository.ts';
import { quoteRefused } from '../tool-name.ts';

/**
 * Bulk import of run reports from a JSONL file, in two streaming passes (the file is never
 * held in memory):
 *  1. validate every line — UTF-8, JSON, the run report schema, the --tenant rule, duplicate
 *     runIds within the file, and conflicts with runs already stored;
 *  2. ingest the valid lines in batches (one short transaction each).
 * Any invalid line without `skipInvalid` → nothing is ingested and every error is returned.
 */

/** Lines longer than this are refused without being buffered (500 calls × 64 KiB args fit). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
const BATCH_RUNS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
const CONFLICT_CHECK_BATCH = 1000;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface IngestLineError {
  /** 1-based line number in the file. */
  line: number;
  /** Field path in the report (`toolCalls[3].tool`), or `(line)` for the line as a whole. */
  path: string;
  reason: string;
  /** The refused value, JSON-quoted (cut at 200 characters), when there is one to show. */
  value?: string;
}

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
}

interface RawLine {
  number: number;
  /** The line's bytes without the line terminator; null when it exceeded MAX_LINE_BYTES. */
  bytes: Buffer | null;
  length: number;
}

/** Splits a file into lines on raw bytes, so each line's UTF-8 can be checked on its own. */
async function* readRawLines(file: string, onBytes: (bytesRead: number) => void): AsyncGenerator<RawLine> {
  let chunks: Buffer[] = [];
  let pendingLength = 0;
  let oversized = false;
  let lineNumber = 0;
  let bytesRead = 0;
  const finishLine = (): RawLine => {
    lineNumber += 1;
    let bytes: Buffer | null = null;
    if (!oversized) {
      bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, pendingLength);
      if (bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN) bytes = bytes.subarray(0, bytes.length - 1);
    }
    const line = { number: lineNumber, bytes, length: pendingLength };
    chunks = [];
    pendingLength = 0;
    oversized = false;
    return line;
  };
  const append = (piece: Buffer) => {
    pendingLength += piece.length;
    if (pendingLength > MAX_LINE_BYTES) {
      oversized = true;
      chunks = [];
    } else if (piece.length > 0) {
      chunks.push(piece);
    }
  };
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE, start); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      append(chunk.subarray(start, newline));
      yield finishLine();
      start = newline + 1;
    }
    append(chunk.subarray(start));
    bytesRead += chunk.length;
    onBytes(bytesRead);
  }
  if (pendingLength > 0 || oversized) yield finishLine();
}

const isBlank = (bytes: Buffer): boolean => bytes.every((byte) => byte === 0x20 || byte === 0x09);

type DecodedLine = { kind: 'blank' } | { kind: 'invalid'; errors: RunReportIssue[] } | { kind: 'report'; report: RunReport; bytes: number };

/** Decodes and validates one line; applies the --tenant rule. */
function decodeLine(raw: RawLine, decoder: TextDecoder, tenantId: string | undefined): DecodedLine {
  if (raw.bytes === null) {
    return { kind: 'invalid', errors: [{ path: '(line)', reason: `line is ${raw.length} bytes; the limit is ${MAX_LINE_BYTES}` }] };
  }
  if (isBlank(raw.bytes)) return { kind: 'blank' };
  let text: string;
  try {
    text = decoder.decode(raw.bytes);
  } catch {
    const offset = firstInvalidUtf8Offset(raw.bytes);
    return { kind: 'invalid', errors: [{ path: '(line)', reason: `invalid UTF-8 at byte ${offset} of the line` }] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid', errors: [{ path: '(line)', reason: `invalid JSON: ${(error as Error).message}` }] };
  }
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
  return { kind: 'report', report: parsed.report, bytes: raw.bytes.length };
}

/** Byte offset of the first malformed UTF-8 sequence (the decoder itself does not say where). */
function firstInvalidUtf8Offset(bytes: Buffer): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  while (offset < bytes.length) {
    const lead = bytes[offset] as number;
    let length: number;
    if (lead < 0x80) length = 1;
    else if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) length = 3;
    else if (lead >= 0xf0 && lead <= 0xf4) length = 4;
    else return offset;
    if (length > 1) {
      try {
        decoder.decode(bytes.subarray(offset, offset + length));
      } catch {
        return offset;
      }
    }
    offset += length;
  }
  return offset;
}

interface PendingConflictCheck {
  line: number;
  runId: string;
  contentSha256: string;
}

/** Runs the ingest of one file. Never throws for bad lines; throws for I/O and database failures. */
export async function ingestJsonlFile(pool: pg.Pool, file: string, options: IngestOptions = {}): Promise<IngestResult> {
  const totalBytes = (await stat(file)).size;
  const report = (phase: IngestProgress['phase']) => (bytesRead: number) => options.onProgress?.({ phase, bytesRead, totalBytes });

  // Pass 1: validate everything.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const errors: IngestLineError[] = [];
  const invalidLines = new Set<number>();
  const firstLineOfRun = new Map<string, number>();
  const pendingChecks = new Map<string, PendingConflictCheck[]>();
  let lines = 0;
  let valid = 0;

  const addErrors = (line: number, issues: readonly RunReportIssue[]) => {
    if (!invalidLines.has(line)) {
      invalidLines.add(line);
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
        addErrors(check.line, [
          {
            path: 'runId',
            reason: 'RunConflict: this run was already ingested with different content; a reported run cannot change',
            value: quoteRefused(check.runId),
          },
        ]);
      }
    }
  };

  for await (const raw of readRawLines(file, report('validate'))) {
    lines = raw.number;
    const decoded = decodeLine(raw, decoder, options.tenantId);
    if (decoded.kind === 'blank') continue;
    valid += 1;
    if (decoded.kind === 'invalid') {
      addErrors(raw.number, decoded.errors);
      continue;
    }
    const { tenantId, runId } = decoded.report;
    const key = `${tenantId}\u0000${runId}`;
    const firstLine = firstLineOfRun.get(key);
    if (firstLine !== undefined) {
      addErrors(raw.number, [
        { path: 'runId', reason: `duplicates the runId of line ${firstLine} (a run appears once per file)`, value: quoteRefused(runId) },
      ]);
      continue;
    }
    firstLineOfRun.set(key, raw.number);
    const pending = pendingChecks.get(tenantId) ?? [];
    pending.push({ line: raw.number, runId, contentSha256: runReportSha256(decoded.report) });
    pendingChecks.set(tenantId, pending);
    if (pending.length >= CONFLICT_CHECK_BATCH) await checkConflicts(tenantId);
  }
  for (const tenantId of [...pendingChecks.keys()]) await checkConflicts(tenantId);
  firstLineOfRun.clear();
  errors.sort((left, right) => left.line - right.line);

  const result: IngestResult = { file, lines, valid, invalid: invalidLines.size, inserted: 0, unchanged: 0, errors };
  if (invalidLines.size > 0 && !options.skipInvalid) return result;
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
  for await (const raw of readRawLines(file, report('ingest'))) {
    if (invalidLines.has(raw.number)) continue;
    const decoded = decodeLine(raw, decoder, options.tenantId);
    if (decoded.kind === 'blank') continue;
    if (decoded.kind === 'invalid') {
      // The file changed between the passes; refuse rather than guess.
      throw new Error(`${file} changed while it was being ingested (line ${raw.number} is no longer valid)`);
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

/** `line N: <field path>: <reason> (refused value <value>)`, the form the CLI prints. */
export function formatIngestError(error: IngestLineError): string {
  const value = error.value !== undefined && !error.reason.includes(error.value) ? ` (refused value ${error.value})` : '';
  return `line ${error.line}: ${error.path}: ${error.reason}${value}`;
}
