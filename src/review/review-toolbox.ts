import type pg from 'pg';
import { z } from 'zod';
import type { SkillManage } from '../authoring/skill-manage.ts';
import type { SkillManageResult } from '../authoring/skill-manage-contract.ts';
import type { RunReport } from '../runs/run-report.ts';
import { SkillAuthoringDenied, SkillManageInvocationReused, SkillManageRequestInvalid } from '../authoring/authoring-errors.ts';
import { SkillNotFound, SkillRevisionConflict, SkillSourceImmutable } from '../skills/skill-errors.ts';
import { SkillNameNotUnique, SkillValidationError } from '../skills/validation-errors.ts';
import { recordSkillEvent } from '../store/skill-event-repository.ts';
import type { SkillRepository } from '../store/skill-repository.ts';

/**
 * The background review's tool set, and nothing else: memory reads (the run under review),
 * `skill.load`, and `skill_manage` under review confinement (read-before-write against what this
 * review loaded, agent skills only, never archive — enforced by skill_manage itself). Any other
 * tool is denied with an event, never run.
 */

export const REVIEW_TOOLS = ['memory.read', 'skill.load', 'skill_manage'] as const;
export const REVIEW_PRINCIPAL = 'skillsmith:review';

export const reviewCallSchema = z.strictObject({
  tool: z.string().min(1).max(128),
  args: z.record(z.string(), z.unknown()).default({}),
});
export type ReviewCall = z.infer<typeof reviewCallSchema>;

export type ReviewCallResult =
  { tool: string; ok: true; result: unknown } | { tool: string; ok: false; error: string; reason: string; currentRevision?: number };

const refusals = [
  SkillNotFound,
  SkillManageRequestInvalid,
  SkillManageInvocationReused,
  SkillValidationError,
  SkillNameNotUnique,
  SkillSourceImmutable,
];

const loadArgsSchema = z.strictObject({ name: z.string().min(1) });
const memoryArgsSchema = z.strictObject({ what: z.enum(['goal', 'transcript']).default('transcript') });

export interface ReviewToolboxDependencies {
  pool: pg.Pool;
  skills: SkillRepository;
  skillManage: SkillManage;
}

export interface ReviewToolbox {
  /** Skills this review loaded, at the revision it loaded (what read-before-write checks). */
  readonly loaded: Map<string, number>;
  call(call: ReviewCall, invocationId: string): Promise<ReviewCallResult>;
}

/** The run under review as enveloped data: the reviewer reads it, it never instructs the reviewer. */
export function renderTranscript(run: RunReport): string {
  const calls = run.toolCalls.map(
    (call, index) =>
      `${index + 1}. ${call.tool}(${JSON.stringify(call.args ?? {}).slice(0, 300)}) → ${call.success ? 'ok' : `failed: ${call.error ?? ''}`}` +
      (call.resultSummary ? ` | ${call.resultSummary.slice(0, 300)}` : ''),
  );
  return [`<run_transcript status="${run.status}">`, `goal: ${JSON.stringify(run.goal)}`, ...calls, '</run_transcript>']
    .join('\n')
    .replace(/<\/run_transcript>(?=[\s\S]*<\/run_transcript>)/g, '');
}

export function createReviewToolbox(
  dependencies: ReviewToolboxDependencies,
  context: { tenantId: string; run: RunReport; reviewRunId: string },
): ReviewToolbox {
  const loaded = new Map<string, number>();
  const { tenantId, run } = context;

  const deny = async (call: ReviewCall, reason: string, message: string): Promise<ReviewCallResult> => {
    await recordSkillEvent(dependencies.pool, tenantId, {
      kind: 'review.denied',
      runId: run.runId,
      name: typeof call.args['name'] === 'string' ? call.args['name'] : null,
      reason,
      detail: { tool: call.tool },
    });
    return { tool: call.tool, ok: false, error: message, reason };
  };

  return {
    loaded,
    async call(call, invocationId) {
      if (!(REVIEW_TOOLS as readonly string[]).includes(call.tool)) {
        return deny(call, 'outside_tool', `${call.tool} is not available to a review (only ${REVIEW_TOOLS.join(', ')})`);
      }
      if (call.tool === 'memory.read') {
        const args = memoryArgsSchema.safeParse(call.args);
        if (!args.success) return { tool: call.tool, ok: false, error: args.error.issues[0]!.message, reason: 'invalid_arguments' };
        return { tool: call.tool, ok: true, result: args.data.what === 'goal' ? run.goal : renderTranscript(run) };
      }
      if (call.tool === 'skill.load') {
        const args = loadArgsSchema.safeParse(call.args);
        if (!args.success) return { tool: call.tool, ok: false, error: args.error.issues[0]!.message, reason: 'invalid_arguments' };
        try {
          const revision = await dependencies.skills.resolve(tenantId, args.data.name);
          loaded.set(revision.name, revision.revision);
          return {
            tool: call.tool,
            ok: true,
            result: { name: revision.name, revision: revision.revision, source: revision.source, content: revision.body },
          };
        } catch (error) {
          if (error instanceof SkillNotFound) return { tool: call.tool, ok: false, error: error.message, reason: 'not_found' };
          throw error;
        }
      }
      try {
        const result: SkillManageResult = await dependencies.skillManage.manage(
          {
            tenantId,
            principalId: REVIEW_PRINCIPAL,
            scopes: ['skill.write'],
            // A review is a fresh run over enveloped data: its own turns start at USER trust.
            originTrust: 'user',
            runId: context.reviewRunId,
            invocationId,
            reviewRun: { loaded },
          },
          call.args,
        );
        return { tool: call.tool, ok: true, result };
      } catch (error) {
        if (error instanceof SkillRevisionConflict) {
          return { tool: call.tool, ok: false, error: error.message, reason: 'conflict', currentRevision: error.currentRevision };
        }
        if (error instanceof SkillAuthoringDenied) return { tool: call.tool, ok: false, error: error.message, reason: error.reason };
        // Refusals the reviewer can read and act on; anything else is a real failure of the review.
        if (refusals.some((refusal) => error instanceof refusal)) {
          return { tool: call.tool, ok: false, error: (error as Error).message, reason: (error as Error).name };
        }
        throw error;
      }
    },
  };
}
