import type { ActivityDependencies } from './dependencies.ts';
import { hasProcedures } from '../src/procedures/procedure-repository.ts';
import { recordReportedRuns } from '../src/runs/reported-runs.ts';

export interface RecordRunsInput {
  tenantId: string;
  agentId: string;
  reports: unknown[];
}

export interface RecordRunsResult {
  /** Newly recorded runs that get a background review (track record and, if on, the LLM review). */
  review: string[];
  inserted: number;
  unchanged: number;
  refused: Array<{ runId: string; reason: string }>;
}

/** The intake's write: idempotent per run; refusals are logged and reported, never retried. */
export const createIntakeActivities = ({ pool, config, logger, rollout }: ActivityDependencies) => ({
  async recordRuns(input: RecordRunsInput): Promise<RecordRunsResult> {
    // Read before the write: once the runs are committed the activity should return at once, since
    // a retry after a crash sees them 'unchanged' and queues no review (gate.skill.review_never_fatal).
    const tenantHasProcedures = await hasProcedures(pool, input.tenantId);
    // The LLM review needs the platform switch and the tenant's rollout activation.
    const reviewActive = config.authoring.reviewEnabled && (await rollout.status(input.tenantId)).active;
    const recorded = await recordReportedRuns(pool, input.tenantId, input.reports);
    const result: RecordRunsResult = { review: [], inserted: 0, unchanged: 0, refused: [] };
    for (const run of recorded) {
      switch (run.outcome) {
        case 'invalid':
        case 'conflict':
          result.refused.push({ runId: run.runId, reason: `${run.outcome}: ${run.reason}` });
          logger.error(
            { tenantId: input.tenantId, agentId: input.agentId, runId: run.runId, reason: run.reason },
            `run report refused (${run.outcome})`,
          );
          break;
        case 'unchanged':
          result.unchanged += 1;
          break;
        case 'inserted': {
          result.inserted += 1;
          // Only runs that did work are reviewed; a track record exists only where procedures do.
          const wantsLlmReview = reviewActive && run.report.status === 'completed';
          const touchesTrackRecord = tenantHasProcedures || run.report.skillPins.length > 0;
          if (run.report.toolCalls.length >= 1 && (wantsLlmReview || touchesTrackRecord)) result.review.push(run.runId);
        }
      }
    }
    return result;
  },
});
