import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';
import {
  beginReviewRecord,
  claimReviewRecords,
  failReviewRecord,
  finishReviewRecord,
  finishReviewRecords,
} from '../src/review/review-repository.ts';
import { createReviewToolbox } from '../src/review/review-toolbox.ts';
import { recallSkills } from '../src/recall/recall.ts';
import { withGoalTextCache } from '../src/embedding/embed-goals.ts';
import { reviewWithLlm, type ReviewOutcome } from '../src/review/reviewer.ts';
import type { TrackRecordUpdate } from '../src/contracts/review-contract.ts';
import { updateTrackRecord, updateTrackRecords } from '../src/review/track-record.ts';
import { findRun, findRunOutlines } from '../src/runs/run-repository.ts';
import type { RunReport } from '../src/runs/run-report.ts';
import type { SkillRevision } from '../src/skills/skill-revision.ts';
import { SkillsmithError } from '../src/errors/skillsmith-error.ts';

export interface ReviewInput {
  tenantId: string;
  runId: string;
}

/** The runs of one review batch (one intake batch of a tenant's agent). */
export interface ReviewBatchInput {
  tenantId: string;
  runIds: string[];
}

/** One run's outcome in a batch: finished with a decision, or failed with the reason. */
export type ReviewOutcomeOfRun = { runId: string; decision: string; detail: Record<string, unknown> };

/** The run under review is gone (it is recorded before its review starts, so this is a bug). */
export class ReviewedRunMissing extends SkillsmithError {
  static override readonly code = 'ReviewedRunMissing';
  static override readonly retryable = false;
}

/** Agent skills the reviewer may build on: those recall matches for the goal first, then the rest, at most 20. */
const CANDIDATE_LIMIT = 20;

export const createReviewActivities = (dependencies: ActivityDependencies) => {
  const { pool, config, logger, skills, rollout } = dependencies;
  const loadRun = async ({ tenantId, runId }: ReviewInput): Promise<RunReport> => {
    const run = await findRun(pool, tenantId, runId);
    if (!run) throw new ReviewedRunMissing(`run ${runId} of tenant ${tenantId} is not recorded`);
    return run;
  };

  /** Marks a run's review failed and logs it, only the first time (a retry or a repeat does nothing). */
  const recordFailure = async (tenantId: string, runId: string, error: string) => {
    if (await failReviewRecord(pool, tenantId, runId, error)) {
      logger.error({ tenantId, runId, error }, `review of run ${runId} failed: ${error}`);
    }
  };

  return {
    /** Records the review as running; says whether the LLM part runs at all. */
    async beginReview(input: ReviewInput): Promise<{ finished: boolean; llmReview: boolean }> {
      const record = await beginReviewRecord(pool, input.tenantId, input.runId);
      const run = await loadRun(input);
      const wanted = config.authoring.reviewEnabled && run.status === 'completed';
      // Review is switched on platform-wide; the tenant's rollout decision says whether it runs here.
      const activated = wanted && (await rollout.status(input.tenantId)).active;
      if (wanted && !activated)
        logger.info({ tenantId: input.tenantId, runId: input.runId }, 'LLM review skipped: the tenant is not activated (rollout show)');
      return { finished: record.status !== 'running', llmReview: activated };
    },

    async updateTrackRecord(input: ReviewInput): Promise<TrackRecordUpdate> {
      return updateTrackRecord(
        { pool, recall: dependencies.recall, synthesis: (await dependencies.tenantConfig(input.tenantId)).synthesis, logger },
        input.tenantId,
        await loadRun(input),
      );
    },

    async reviewWithLlm(input: ReviewInput & { reviewRunId: string }): Promise<ReviewOutcome> {
      const run = await loadRun(input);
      const chat = dependencies.reviewer();
      const recalled = await dependencies.recall(input.tenantId, { goal: run.goal, topK: 5 }).catch(() => []);
      const agentSkills = (await skills.listActive(input.tenantId, 200)).filter((skill) => skill.source === 'agent');
      const first = new Set(recalled.map((match) => match.name));
      const candidates: SkillRevision[] = [
        ...agentSkills.filter((skill) => first.has(skill.name)),
        ...agentSkills.filter((skill) => !first.has(skill.name)),
      ].slice(0, CANDIDATE_LIMIT);
      const toolbox = createReviewToolbox(
        { pool, skills, skillManage: dependencies.skillManage },
        { tenantId: input.tenantId, run, reviewRunId: input.reviewRunId },
      );
      return whileHeartbeating((signal) => reviewWithLlm(chat, toolbox, { run, reviewRunId: input.reviewRunId, candidates, signal }));
    },

    async finishReview(input: ReviewInput & { decision: string; detail: Record<string, unknown> }): Promise<void> {
      await whileHeartbeating(() =>
        finishReviewRecord(pool, input.tenantId, input.runId, { decision: input.decision, detail: input.detail }),
      );
      logger.info({ tenantId: input.tenantId, runId: input.runId, decision: input.decision }, 'review finished');
    },

    /**
     * Claims a batch's runs for this review execution (at most once per run: a run claimed by
     * another is left out) and says which of them get the LLM review.
     */
    async beginReviews(input: ReviewBatchInput & { reviewId: string }): Promise<{ claimed: string[]; llmReview: string[] }> {
      return whileHeartbeating(async () => {
        const { tenantId } = input;
        const claimed = await claimReviewRecords(pool, tenantId, input.runIds, input.reviewId);
        if (!config.authoring.reviewEnabled || claimed.length === 0) return { claimed, llmReview: [] };
        const completed = (await findRunOutlines(pool, tenantId, claimed))
          .filter((run) => run.status === 'completed')
          .map((run) => run.runId);
        // Review is switched on platform-wide; the tenant's rollout decision says whether it runs here.
        const activated = completed.length > 0 && (await rollout.status(tenantId)).active;
        if (completed.length > 0 && !activated)
          logger.info({ tenantId, runs: completed.length }, 'LLM review skipped: the tenant is not activated (rollout show)');
        return { claimed, llmReview: activated ? completed : [] };
      });
    },

    /** The track record of a batch's runs at once; a run that is not recorded fails alone (named), the others go on. */
    async updateTrackRecords(
      input: ReviewBatchInput,
    ): Promise<Array<{ runId: string; update: TrackRecordUpdate } | { runId: string; error: string }>> {
      return whileHeartbeating(async () => {
        const { tenantId } = input;
        const runs = await findRunOutlines(pool, tenantId, input.runIds);
        // Recalled without recording use (a review is not a use); the goals are embedded together,
        // each only when no pass or earlier review has (the tenant's goal text cache).
        // The tenant's model and its recall threshold and τ (src/app/tenant-config.ts).
        const tenant = await dependencies.tenantConfig(tenantId);
        // In the background: the API answering POST /v1/runs in this process waits for one short
        // single-threaded batch at most, not for the review's whole embedding (bench/results/2026-11-29-run-intake.md).
        const recallMany = async (id: string, goals: string[]) =>
          recallSkills(
            {
              pool,
              embedder: withGoalTextCache(pool, await dependencies.embedder(id, { background: true }), id),
              threshold: tenant.recall.threshold,
              spaces: dependencies.recallSpaces,
            },
            id,
            goals,
          );
        const updates = await updateTrackRecords(
          { pool, recall: dependencies.recall, recallMany, synthesis: tenant.synthesis, logger },
          tenantId,
          runs,
        );
        const byRun = new Map(runs.map((run, index) => [run.runId, updates[index]!]));
        return input.runIds.map((runId) => {
          const update = byRun.get(runId);
          return update
            ? { runId, update }
            : { runId, error: `${ReviewedRunMissing.code}: run ${runId} of tenant ${tenantId} is not recorded` };
        });
      });
    },

    async finishReviews(input: { tenantId: string; outcomes: ReviewOutcomeOfRun[] }): Promise<void> {
      return whileHeartbeating(async () => {
        await finishReviewRecords(pool, input.tenantId, input.outcomes);
        logger.info({ tenantId: input.tenantId, runs: input.outcomes.length }, 'reviews finished');
      });
    },

    /** recordReviewFailure for several runs: each failure is recorded and logged once. */
    async recordReviewFailures(input: { tenantId: string; failures: Array<{ runId: string; error: string }> }): Promise<void> {
      return whileHeartbeating(async () => {
        for (const { runId, error } of input.failures) await recordFailure(input.tenantId, runId, error);
      });
    },

    /** Never fatal, logged once: the first call marks the review failed and logs; repeats do nothing. */
    async recordReviewFailure(input: ReviewInput & { error: string }): Promise<void> {
      await recordFailure(input.tenantId, input.runId, input.error);
    },
  };
};
