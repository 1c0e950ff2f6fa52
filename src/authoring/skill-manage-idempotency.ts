import type { SkillRevision } from '../skills/skill-revision.ts';
import type { Queryable } from '../store/database.ts';
import { findSkillManageInvocation, type SkillManageInvocation } from './skill-manage-invocation-repository.ts';
import { SkillRevisionConflict } from '../skills/skill-errors.ts';
import { SkillNameNotUnique } from '../skills/validation-errors.ts';
import { SkillManageInvocationReused } from './authoring-errors.ts';
import { skillManageOutcomeSchema, type ManageInvocation, type SkillManageResult } from './skill-manage-contract.ts';

/**
 * skill_manage's idempotency: the same invocation with the same arguments replays its recorded
 * outcome; the same invocation id with other arguments is refused and nothing is written.
 */

/** The recorded outcome of this invocation, or SkillManageInvocationReused when its arguments differ. */
export function replayOf(recorded: SkillManageInvocation, invocation: ManageInvocation): SkillManageResult {
  if (recorded.argumentSha256 !== invocation.argumentSha256) {
    throw new SkillManageInvocationReused(invocation.context.invocationId, recorded.argumentSha256, invocation.argumentSha256);
  }
  return { ...skillManageOutcomeSchema.parse(recorded.result), replayed: true };
}

/** The replay of this invocation if it has already taken effect. */
export async function findReplay(db: Queryable, invocation: ManageInvocation): Promise<SkillManageResult | undefined> {
  const recorded = await findSkillManageInvocation(db, invocation.context.tenantId, invocation.context.invocationId);
  return recorded ? replayOf(recorded, invocation) : undefined;
}

/** A write refused on uniqueness or compare-and-swap may have lost to a retry of this very invocation. */
export function mayHaveRacedItself(error: unknown): boolean {
  const uniqueViolation = (error as { code?: string } | null)?.code === '23505';
  return uniqueViolation || error instanceof SkillRevisionConflict || error instanceof SkillNameNotUnique;
}

/**
 * The store replays an agent install by invocation id alone; a revision this invocation id wrote
 * earlier with other arguments is a reused invocation, not a replay.
 */
export function checkInstalledByInvocation(installed: SkillRevision, invocation: ManageInvocation): void {
  if (installed.authoredBy?.idempotencyKey === invocation.idempotencyKey) return;
  const recordedSha256 = installed.authoredBy?.idempotencyKey.split(':').pop() ?? '';
  throw new SkillManageInvocationReused(invocation.context.invocationId, recordedSha256, invocation.argumentSha256);
}
