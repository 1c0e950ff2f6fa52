import type { RunStatus } from '../runs/run-report.ts';

/**
 * Which recorded runs get a background review: only runs that did work, and only where there is
 * something to do — an LLM review of a completed run when reviews are on, or a track record to
 * keep (the tenant has procedures, or the run pinned skills).
 */
export function wantsReview(
  run: { status: RunStatus; toolCallCount: number; skillPinCount: number },
  setting: { llmReviewEnabled: boolean; tenantHasProcedures: boolean },
): boolean {
  const wantsLlmReview = setting.llmReviewEnabled && run.status === 'completed';
  const touchesTrackRecord = setting.tenantHasProcedures || run.skillPinCount > 0;
  return run.toolCallCount >= 1 && (wantsLlmReview || touchesTrackRecord);
}

/**
 * Whether any review could want a run, decided at the door of `POST /v1/runs` before its intake is
 * told about it: `wantsReview` over what may be true by the time the intake decides — the LLM
 * review counted on when the platform switch is on (the tenant's activation is left to the
 * intake), procedures asked of `tenantHasProcedures` only when nothing else settles it. Never
 * false where the intake's own decision could be true on the same facts, so a run this turns away
 * is one no review wants; the intake still decides every run it is told about exactly as before.
 */
export async function mayWantReview(
  run: { status: RunStatus; toolCallCount: number; skillPinCount: number },
  setting: { llmReviewEnabled: boolean },
  tenantHasProcedures: () => Promise<boolean>,
): Promise<boolean> {
  if (!wantsReview(run, { ...setting, tenantHasProcedures: true })) return false;
  if (wantsReview(run, { ...setting, tenantHasProcedures: false })) return true;
  return tenantHasProcedures();
}
