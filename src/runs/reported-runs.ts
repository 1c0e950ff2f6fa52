import type pg from 'pg';
import { parseRunReport, type RunReport } from './run-report.ts';
import { RunConflict, upsertRuns } from './run-repository.ts';

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
  const results = new Map<number, RecordedRun>();
  const valid: Array<{ index: number; report: RunReport }> = [];
  reports.forEach((value, index) => {
    const reportedRunId = (value as { runId?: unknown } | null)?.runId;
    const runId = typeof reportedRunId === 'string' || typeof reportedRunId === 'number' ? String(reportedRunId) : `#${index}`;
    const parsed = parseRunReport(value);
    if (!parsed.success) {
      results.set(index, { runId, outcome: 'invalid', reason: parsed.issues.map((issue) => `${issue.path}: ${issue.reason}`).join('; ') });
    } else if (parsed.report.tenantId !== tenantId) {
      results.set(index, {
        runId,
        outcome: 'invalid',
        reason: `tenantId ${parsed.report.tenantId} does not match the intake's tenant ${tenantId}`,
      });
    } else {
      valid.push({ index, report: parsed.report });
    }
  });

  let pending = valid;
  for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
    try {
      const written = await upsertRuns(
        pool,
        tenantId,
        pending.map((entry) => entry.report),
      );
      const inserted = new Set(written.inserted);
      for (const { index, report } of pending) {
        results.set(
          index,
          inserted.has(report.runId)
            ? { runId: report.runId, outcome: 'inserted', report }
            : { runId: report.runId, outcome: 'unchanged', report },
        );
      }
      pending = [];
    } catch (error) {
      if (!(error instanceof RunConflict) || attempt > 0) throw error;
      // The batch rolled back whole: refuse the conflicting runs and record the rest.
      const conflicting = new Set(error.runIds);
      for (const { index, report } of pending) {
        if (conflicting.has(report.runId)) {
          results.set(index, {
            runId: report.runId,
            outcome: 'conflict',
            reason: 'already reported with different content; a reported run cannot change',
          });
        }
      }
      pending = pending.filter(({ report }) => !conflicting.has(report.runId));
    }
  }
  return reports.map((_, index) => results.get(index)!);
}
