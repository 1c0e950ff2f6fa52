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
