import { createReadStream } from 'node:fs';
import { requireReadableFile } from './input-file.ts';
import { TextDecoder } from 'node:util';

/**
 * Reading a JSONL file line by line on raw bytes, so each line's UTF-8 and JSON are checked on
 * their own and a bad line is reported by its number: what `skillsmith ingest` and
 * `skillsmith rollout record` both read.
 */

/** Lines longer than this are refused without being buffered (500 calls × 64 KiB args fit). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface RawLine {
  number: number;
  /** The line's bytes without the line terminator; null when it exceeded MAX_LINE_BYTES. */
  bytes: Buffer | null;
  length: number;
}

/** Splits a file into lines on raw bytes, so each line's UTF-8 can be checked on its own. */
export async function* readRawLines(file: string, onBytes: (bytesRead: number) => void): AsyncGenerator<RawLine> {
  await requireReadableFile(file);
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

export type JsonLine = { kind: 'blank' } | { kind: 'invalid'; reason: string } | { kind: 'value'; value: unknown };

/** One line as JSON: blank, invalid (why: too long, not UTF-8, not JSON), or the parsed value. */
export function decodeJsonLine(raw: RawLine, decoder: TextDecoder): JsonLine {
  if (raw.bytes === null) return { kind: 'invalid', reason: `line is ${raw.length} bytes; the limit is ${MAX_LINE_BYTES}` };
  if (isBlank(raw.bytes)) return { kind: 'blank' };
  let text: string;
  try {
    text = decoder.decode(raw.bytes);
  } catch {
    return { kind: 'invalid', reason: `invalid UTF-8 at byte ${firstInvalidUtf8Offset(raw.bytes)} of the line` };
  }
  try {
    return { kind: 'value', value: JSON.parse(text) as unknown };
  } catch (error) {
    return { kind: 'invalid', reason: `invalid JSON: ${(error as Error).message}` };
  }
}

/** A refused line: its 1-based number, the field (or `(line)`), why, and the refused value, JSON-quoted. */
export interface JsonlLineError {
  line: number;
  path: string;
  reason: string;
  value?: string;
}

/** `line N: <field>: <reason> (refused value V)`, the form the CLI prints. */
export function formatJsonlLineError(error: JsonlLineError): string {
  const value = error.value !== undefined && !error.reason.includes(error.value) ? ` (refused value ${error.value})` : '';
  return `line ${error.line}: ${error.path}: ${error.reason}${value}`;
}
