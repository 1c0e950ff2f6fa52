import type { ActivityDependencies } from './dependencies.ts';
import { failFast } from './failures.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { beginReviewRecord, failReviewRecord, finishReviewRecord } from '../src/review/review-repository.ts';
import { createReviewToolbox } from '../src/review/review-toolbox.ts';
import { reviewWithLlm, type ReviewOutcome } from '../src/review/reviewer.ts';
import { updateTrackRecord, type TrackRecordUpdate } from '../src/review/track-record.ts';
import { findRun } from '../src/runs/run-repository.ts';
import type { RunReport } from '../src/runs/run-report.ts';
import type { SkillRevision } from '../src/skills/skill-revision.ts';
import { SkillsmithError } from '../src/skillsmith-error.ts';

export interface ReviewInput {
  tenantId: string;
  runId: string;
}

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
      return failFast(async () =>
        updateTrackRecord({ pool, recall: dependencies.recall, synthesis: config.synthesis, logger }, input.tenantId, await loadRun(input)),
      );
    },

    async reviewWithLlm(input: ReviewInput & { reviewRunId: string }): Promise<ReviewOutcome> {
      return failFast(async () => {
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
      });
    },

    async finishReview(input: ReviewInput & { decision: string; detail: Record<string, unknown> }): Promise<void> {
      await finishReviewRecord(pool, input.tenantId, input.runId, { decision: input.decision, detail: input.detail });
      logger.info({ tenantId: input.tenantId, runId: input.runId, decision: input.decision }, 'review finished');
    },

    /** Never fatal, logged once: the first call marks the review failed and logs; repeats do nothing. */
    async recordReviewFailure(input: ReviewInput & { error: string }): Promise<void> {
      if (await failReviewRecord(pool, input.tenantId, input.runId, input.error)) {
        logger.error(
          { tenantId: input.tenantId, runId: input.runId, error: input.error },
          `review of run ${input.runId} failed: ${input.error}`,
        );
      }
    },
  };
};
