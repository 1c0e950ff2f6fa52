import type pg from 'pg';
import type { RunReport } from './run-report.ts';
import { recordValidatedRuns } from './reported-runs.ts';
import { RunConflict } from './run-repository.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** Valid by the run report contract, but the database refuses to store it (e.g. a timestamp in year 0). */
export class RunNotStorable extends SkillsmithError {
  static override readonly code = 'RunNotStorable';
  static override readonly httpStatus = 400;
}

/** Reports per transaction: as many as the intake workflow records per activity call. */
const MAX_GROUP = 100;

interface Waiting {
  report: RunReport;
  resolve(outcome: 'inserted' | 'unchanged'): void;
  reject(error: Error): void;
}

/**
 * Stores single run reports as they arrive (the HTTP intake), each durable before its promise
 * resolves, by group commit: while one tenant's transaction is in flight, the reports that arrive
 * wait and are written together in the next one — one transaction per burst instead of one per
 * report. Each report gets its own outcome: inserted or unchanged (idempotent on tenant + runId),
 * RunConflict for other content under a stored runId, RunNotStorable for content the database
 * refuses; a database failure rejects the whole group (nothing of it is claimed stored).
 */
export function createGroupedRunWriter(pool: pg.Pool): (report: RunReport) => Promise<'inserted' | 'unchanged'> {
  const queues = new Map<string, Waiting[]>();

  async function drain(tenantId: string, queue: Waiting[]): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, MAX_GROUP);
      try {
        // Validated at the door (admitRunReport): not parsed again.
        const recorded = await recordValidatedRuns(
          pool,
          tenantId,
          group.map((entry) => entry.report),
        );
        recorded.forEach((run, index) => {
          const { resolve, reject } = group[index]!;
          if (run.outcome === 'inserted' || run.outcome === 'unchanged') resolve(run.outcome);
          else if (run.outcome === 'conflict') reject(new RunConflict(tenantId, [run.runId]));
          else reject(new RunNotStorable(`run ${JSON.stringify(run.runId)} cannot be stored: ${run.reason}`));
        });
      } catch (error) {
        for (const { reject } of group) reject(error as Error);
      }
    }
    queues.delete(tenantId);
  }

  return (report) =>
    new Promise((resolve, reject) => {
      const queue = queues.get(report.tenantId);
      if (queue) {
        queue.push({ report, resolve, reject });
        return;
      }
      const started: Waiting[] = [{ report, resolve, reject }];
      queues.set(report.tenantId, started);
      void drain(report.tenantId, started);
    });
}
