import { TextDecoder } from 'node:util';
import type pg from 'pg';
import type { z } from 'zod';
import { decodeJsonLine, readRawLines, type JsonlLineError } from '../input/jsonl-lines.ts';
import { withTransaction } from '../store/database.ts';
import { quoteRefused } from '../input/tool-name.ts';
import { pairedSampleSchema, samePairedOutcome, type PairedSample } from './paired-evidence.ts';
import { findStoredPairs, insertPairs } from './rollout-repository.ts';

/**
 * Recording paired evaluation evidence (`rollout record --file`, `POST /v1/rollout/evidence`):
 * every sample is validated first; with any invalid one nothing is recorded and every error is
 * listed (line or item number, field, reason, the refused value). A case recorded again for the
 * same combination with the same outcome changes nothing; with a different outcome it is refused,
 * because recorded evidence cannot change.
 */

/** A refused sample: `line` is the line of a pairs file, or the 1-based item of a request's `pairs`. */
export type PairError = JsonlLineError;

export interface RecordPairsResult {
  /** Samples seen (blank lines of a file are not samples). */
  samples: number;
  valid: number;
  invalid: number;
  inserted: number;
  unchanged: number;
  errors: PairError[];
}

const INSERT_BATCH = 1000;

function describeIssues(line: number, error: z.ZodError): PairError[] {
  return error.issues.flatMap((issue): PairError[] => {
    const path = issue.path.map(String).join('.') || '(line)';
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ line, path: key, reason: 'unknown field', value: quoteRefused(key) }));
    }
    if (issue.code === 'invalid_type' && issue.input === undefined) {
      return [{ line, path, reason: `is required (expected ${issue.expected})` }];
    }
    const quoted = issue.input !== undefined && (typeof issue.input !== 'object' || issue.input === null);
    return [{ line, path, reason: issue.message, ...(quoted ? { value: quoteRefused(issue.input) } : {}) }];
  });
}

const caseKey = (sample: PairedSample): string =>
  JSON.stringify([sample.modelPolicy, sample.policyProfile, sample.authoringVersion, sample.caseId]);

/** Validates `entries` (each with its 1-based line), then records them all or none. */
export async function recordPairedSamples(
  pool: pg.Pool,
  tenantId: string,
  entries: ReadonlyArray<{ line: number; value: unknown } | { line: number; invalid: string }>,
): Promise<RecordPairsResult> {
  const errors: PairError[] = [];
  // The first line of each case in this batch: a repeat that says the same is unchanged, one that differs is refused.
  const firstOfCase = new Map<string, { line: number; sample: PairedSample }>();
  let repeats = 0;
  for (const entry of entries) {
    if ('invalid' in entry) {
      errors.push({ line: entry.line, path: '(line)', reason: entry.invalid });
      continue;
    }
    const parsed = pairedSampleSchema.safeParse(entry.value, { reportInput: true });
    if (!parsed.success) {
      errors.push(...describeIssues(entry.line, parsed.error));
      continue;
    }
    const earlier = firstOfCase.get(caseKey(parsed.data));
    if (earlier === undefined) {
      firstOfCase.set(caseKey(parsed.data), { line: entry.line, sample: parsed.data });
    } else if (samePairedOutcome(earlier.sample, parsed.data)) {
      repeats += 1;
    } else {
      errors.push({
        line: entry.line,
        path: 'caseId',
        reason: `this case of the same combination is on line ${earlier.line} with a different outcome`,
        value: quoteRefused(parsed.data.caseId),
      });
    }
  }

  const samples = [...firstOfCase.values()];
  const stored = new Map<string, PairedSample>();
  for (let start = 0; start < samples.length; start += INSERT_BATCH) {
    const batch = samples.slice(start, start + INSERT_BATCH).map((entry) => entry.sample);
    for (const sample of await findStoredPairs(pool, tenantId, batch)) stored.set(caseKey(sample), sample);
  }
  for (const { line, sample } of samples) {
    const recorded = stored.get(caseKey(sample));
    if (recorded !== undefined && !samePairedOutcome(recorded, sample)) {
      errors.push({
        line,
        path: 'caseId',
        reason: 'this case was recorded before for the same combination with a different outcome; recorded evidence cannot change',
        value: quoteRefused(sample.caseId),
      });
    }
  }
  errors.sort((left, right) => left.line - right.line);

  const invalid = new Set(errors.map((error) => error.line)).size;
  const result: RecordPairsResult = {
    samples: entries.length,
    valid: entries.length - invalid,
    invalid,
    inserted: 0,
    unchanged: 0,
    errors,
  };
  if (invalid > 0) return result;
  result.inserted = await withTransaction(pool, async (client) => {
    let inserted = 0;
    for (let start = 0; start < samples.length; start += INSERT_BATCH) {
      inserted += await insertPairs(
        client,
        tenantId,
        samples.slice(start, start + INSERT_BATCH).map((entry) => entry.sample),
      );
    }
    return inserted;
  });
  result.unchanged = samples.length - result.inserted + repeats;
  return result;
}

/** `rollout record --file`: a JSONL pairs file, one sample a line (held in memory: evaluation suites are small). */
export async function recordPairsFile(
  pool: pg.Pool,
  tenantId: string,
  file: string,
): Promise<RecordPairsResult & { file: string; lines: number }> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const entries: Array<{ line: number; value: unknown } | { line: number; invalid: string }> = [];
  let lines = 0;
  for await (const raw of readRawLines(file, () => undefined)) {
    lines = raw.number;
    const decoded = decodeJsonLine(raw, decoder);
    if (decoded.kind === 'value') entries.push({ line: raw.number, value: decoded.value });
    else if (decoded.kind === 'invalid') entries.push({ line: raw.number, invalid: decoded.reason });
  }
  return { file, lines, ...(await recordPairedSamples(pool, tenantId, entries)) };
}
