import type pg from 'pg';
import type { Config } from '../src/app/config.ts';
import { extractRuns } from '../src/runs/extraction.ts';

export interface ExtractRunsInput {
  tenantId: string;
  /** ISO time of the last successful pass; null for a full pass. */
  since: string | null;
  /** ISO upper bound; omitted = the database's now (recorded in the result). */
  until?: string | null;
}

/**
 * Counts and the window only — never the runs themselves: at 100k runs their ids alone would
 * crowd Temporal's payload limits. Later steps re-select the same window from the database.
 */
export interface ExtractRunsResult {
  tenantId: string;
  since: string | null;
  until: string;
  runsInWindow: number;
  successfulSequences: number;
  failedAttempts: number;
  tooShort: number;
}

export interface ExtractActivityDependencies {
  pool: pg.Pool;
  config: Config;
}

export const createExtractActivities = ({ pool, config }: ExtractActivityDependencies) => ({
  async extractRuns(input: ExtractRunsInput): Promise<ExtractRunsResult> {
    const summary = await extractRuns(pool, input.tenantId, {
      since: input.since === null ? null : new Date(input.since),
      until: input.until == null ? null : new Date(input.until),
      minSteps: config.synthesis.minSteps,
    });
    return {
      tenantId: summary.tenantId,
      since: summary.since === null ? null : summary.since.toISOString(),
      until: summary.until.toISOString(),
      runsInWindow: summary.runsInWindow,
      successfulSequences: summary.successfulSequences,
      failedAttempts: summary.failedAttempts,
      tooShort: summary.tooShort,
    };
  },
});
