import type { Queryable } from '../store/database.ts';
import { databaseNow, selectRunsForExtraction, type RunForExtraction } from './run-repository.ts';

/**
 * DETECT (000 spec step 1): the runs a synthesis pass works on. A run is a *successful
 * sequence* when its status is completed and it has at least `minSteps` successful tool
 * calls. Failed and cancelled runs are kept as *attempts*, so a cluster's success rate
 * (successes / attempts) counts them. Completed runs with fewer successful calls than
 * `minSteps` are neither: too short to distil, and not a failure either.
 */

export interface ExtractOptions {
  /** Only runs ingested after this instant (the last successful pass); null/undefined = all. */
  since?: Date | null;
  /** Only runs ingested at or before this instant; defaults to the database's now. */
  until?: Date | null;
  minSteps: number;
}

export interface ExtractedRun {
  runId: string;
  status: RunForExtraction['status'];
  /** True for a successful sequence; false for a failed or cancelled attempt. */
  successful: boolean;
  /** Tools of the run's successful calls, in order. */
  toolSequence: string[];
}

export interface ExtractionSummary {
  tenantId: string;
  since: Date | null;
  /** The upper bound used; later steps re-select the same window with it. */
  until: Date;
  /** Runs ingested in the window. */
  runsInWindow: number;
  /** Completed runs with ≥ minSteps successful calls. */
  successfulSequences: number;
  /** Failed or cancelled runs (attempts that count against success rates). */
  failedAttempts: number;
  /** Completed runs with fewer than minSteps successful calls (left out). */
  tooShort: number;
  /** Successful sequences then failed attempts, each ordered by run id. */
  runs: ExtractedRun[];
}

export async function extractRuns(db: Queryable, tenantId: string, options: ExtractOptions): Promise<ExtractionSummary> {
  if (!Number.isInteger(options.minSteps) || options.minSteps < 1) {
    throw new RangeError(`minSteps must be a positive integer, got ${options.minSteps}`);
  }
  const since = options.since ?? null;
  const until = options.until ?? (await databaseNow(db));
  const rows = await selectRunsForExtraction(db, tenantId, { since, until });
  const successful: ExtractedRun[] = [];
  const failed: ExtractedRun[] = [];
  let tooShort = 0;
  for (const row of rows) {
    if (row.status === 'completed') {
      if (row.successfulTools.length >= options.minSteps) {
        successful.push({ runId: row.runId, status: row.status, successful: true, toolSequence: row.successfulTools });
      } else {
        tooShort += 1;
      }
    } else {
      failed.push({ runId: row.runId, status: row.status, successful: false, toolSequence: row.successfulTools });
    }
  }
  return {
    tenantId,
    since,
    until,
    runsInWindow: rows.length,
    successfulSequences: successful.length,
    failedAttempts: failed.length,
    tooShort,
    runs: [...successful, ...failed],
  };
}
