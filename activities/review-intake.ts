import type { ActivityDependencies } from './dependencies.ts';
import { MAX_REPORT_PAYLOAD_BYTES } from '../src/contracts/intake-contract.ts';
import { hasProcedures } from '../src/procedures/procedure-repository.ts';
import { wantsReview } from '../src/review/review-eligibility.ts';
import { recordReportedRuns } from '../src/runs/reported-runs.ts';
import { findRunReviewFacts } from '../src/runs/run-repository.ts';

export interface RecordRunsInput {
  tenantId: string;
  agentId: string;
  /** Whole reports (the runCompleted signal): recorded here. */
  reports: unknown[];
  /** Runs the API stored before signalling (runStored): only their review is decided here. */
  storedRunIds?: string[];
  /** Signalled reports too large to pass to an activity: refused, and logged here. */
  oversized?: Array<{ runId: string; bytes: number }>;
}

export interface RecordRunsResult {
  /** Recorded runs not reviewed yet that get a background review (track record and, if on, the LLM review). */
  review: string[];
  inserted: number;
  unchanged: number;
  refused: Array<{ runId: string; reason: string }>;
}

/** The intake's write: idempotent per run; refusals are logged and reported, never retried; any other failure is logged, then retried. */
export const createIntakeActivities = ({ pool, config, logger, rollout }: ActivityDependencies) => ({
  async recordRuns(input: RecordRunsInput): Promise<RecordRunsResult> {
    const { tenantId, agentId } = input;
    const result: RecordRunsResult = { review: [], inserted: 0, unchanged: 0, refused: [] };
    const refuse = (runId: string, outcome: string, reason: string) => {
      result.refused.push({ runId, reason: `${outcome}: ${reason}` });
      logger.error({ tenantId, agentId, runId, reason }, `run report refused (${outcome})`);
    };
    for (const { runId, bytes } of input.oversized ?? []) {
      refuse(runId, 'too_large', `${bytes} bytes as JSON, over the ${MAX_REPORT_PAYLOAD_BYTES}-byte limit of a Temporal payload`);
    }
    try {
      const recorded = await recordReportedRuns(pool, tenantId, input.reports);
      const candidates = new Set(input.storedRunIds);
      for (const run of recorded) {
        switch (run.outcome) {
          case 'invalid':
          case 'conflict':
            refuse(run.runId, run.outcome, run.reason);
            break;
          case 'unchanged':
            result.unchanged += 1;
            candidates.add(run.runId);
            break;
          case 'inserted':
            result.inserted += 1;
            candidates.add(run.runId);
        }
      }
      // Decided on what is stored, for new and repeated reports alike: a run whose recording or
      // signal was retried is still reviewed, and a run reviewed already is not (at most once).
      const facts = await findRunReviewFacts(pool, tenantId, [...candidates]);
      // The LLM review needs the platform switch and the tenant's rollout activation.
      const llmReviewEnabled = config.authoring.reviewEnabled && (await rollout.status(tenantId)).active;
      const setting = { llmReviewEnabled, tenantHasProcedures: await hasProcedures(pool, tenantId) };
      for (const run of facts) if (!run.reviewed && wantsReview(run, setting)) result.review.push(run.runId);
      const known = new Set(facts.map((run) => run.runId));
      for (const runId of input.storedRunIds ?? []) if (!known.has(runId)) refuse(runId, 'unknown', 'signalled as stored, but no such run');
      return result;
    } catch (error) {
      logger.error({ err: error, tenantId, agentId, reports: input.reports.length }, 'recording reported runs failed (retried)');
      throw error;
    }
  },
});
