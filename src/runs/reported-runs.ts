import type pg from 'pg';
import { parseRunReport, type RunReport } from './run-report.ts';
import { RunConflict, upsertRuns } from './run-repository.ts';
import { isContentError } from '../store/content-error.ts';

/**
 * Records run reports that arrived one by one (the intake signal, the HTTP API): each is
 * validated again on this side, recorded idempotently, and a bad or conflicting report is
 * refused on its own without holding back the others.
 */

export type RecordedRun =
  | { runId: string; outcome: 'inserted'; report: RunReport }
  | { runId: string; outcome: 'unchanged'; report: RunReport }
  | { runId: string; outcome: 'invalid' | 'conflict'; reason: string };

export async function recordReportedRuns(pool: pg.Pool, tenantId: string, reports: readonly unknown[]): Promise<RecordedRun[]> {
  return record(
    pool,
    tenantId,
    reports.map((value, index) => {
      const parsed = parseRunReport(value);
      if (parsed.success) return parsed.report;
      const reportedRunId = (value as { runId?: unknown } | null)?.runId;
      const runId = typeof reportedRunId === 'string' || typeof reportedRunId === 'number' ? String(reportedRunId) : `#${index}`;
      return { runId, invalid: parsed.issues.map((issue) => `${issue.path}: ${issue.reason}`).join('; ') };
    }),
  );
}

/**
 * `recordReportedRuns` for reports validated already in this process (`admitRunReport`: the HTTP
 * intake): the same outcomes without parsing each report a second time — the parse was the larger
 * part of the intake's own CPU per run (bench/results/2026-11-29-run-intake.md).
 */
export async function recordValidatedRuns(pool: pg.Pool, tenantId: string, reports: readonly RunReport[]): Promise<RecordedRun[]> {
  return record(pool, tenantId, reports);
}

async function record(
  pool: pg.Pool,
  tenantId: string,
  entries: ReadonlyArray<RunReport | { runId: string; invalid: string }>,
): Promise<RecordedRun[]> {
  const results = new Map<number, RecordedRun>();
  const valid: Array<{ index: number; report: RunReport }> = [];
  entries.forEach((entry, index) => {
    if ('invalid' in entry) {
      results.set(index, { runId: entry.runId, outcome: 'invalid', reason: entry.invalid });
    } else if (entry.tenantId !== tenantId) {
      results.set(index, {
        runId: entry.runId,
        outcome: 'invalid',
        reason: `tenantId ${entry.tenantId} does not match the intake's tenant ${tenantId}`,
      });
    } else {
      valid.push({ index, report: entry });
    }
  });
  // Reports of one runId in one batch (a run posted twice at once) are stored in turn, first come
  // first: the first is stored (or found stored), a later one is then unchanged or a conflict on its
  // own. Stored together, a different content made the batch refuse every one of them.
  const rounds: Array<typeof valid> = [];
  const occurrences = new Map<string, number>();
  for (const entry of valid) {
    const round = occurrences.get(entry.report.runId) ?? 0;
    occurrences.set(entry.report.runId, round + 1);
    (rounds[round] ??= []).push(entry);
  }
  for (const round of rounds) await store(pool, tenantId, round, results);
  return entries.map((_, index) => results.get(index)!);
}

/**
 * Writes the batch in one transaction. A run that conflicts is refused and the rest written again;
 * a batch whose content the database refuses is written run by run, so only the run at fault is
 * refused. Any other error (the database unreachable, …) is thrown for the activity to retry.
 */
async function store(
  pool: pg.Pool,
  tenantId: string,
  entries: Array<{ index: number; report: RunReport }>,
  results: Map<number, RecordedRun>,
): Promise<void> {
  if (entries.length === 0) return;
  try {
    const inserted = new Set(
      (
        await upsertRuns(
          pool,
          tenantId,
          entries.map((entry) => entry.report),
        )
      ).inserted,
    );
    for (const { index, report } of entries) {
      results.set(index, { runId: report.runId, outcome: inserted.has(report.runId) ? 'inserted' : 'unchanged', report });
    }
  } catch (error) {
    if (error instanceof RunConflict) {
      // The batch rolled back whole: refuse the conflicting runs and record the rest.
      const conflicting = new Set(error.runIds);
      const rest = entries.filter(({ report }) => !conflicting.has(report.runId));
      if (rest.length === entries.length) throw error;
      for (const { index, report } of entries) {
        if (conflicting.has(report.runId)) {
          results.set(index, {
            runId: report.runId,
            outcome: 'conflict',
            reason: 'already reported with different content; a reported run cannot change',
          });
        }
      }
      await store(pool, tenantId, rest, results);
    } else if (isContentError(error) && entries.length > 1) {
      for (const entry of entries) await store(pool, tenantId, [entry], results);
    } else if (isContentError(error)) {
      const [{ index, report }] = entries as [{ index: number; report: RunReport }];
      results.set(index, { runId: report.runId, outcome: 'invalid', reason: `the database refuses it: ${error.message}` });
    } else {
      throw error;
    }
  }
}
