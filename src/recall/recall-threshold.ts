import { modelProfile } from '../embedding/model-profiles.ts';

/**
 * The recall threshold's default per embedding model: the best cosine (goal against what a
 * procedure is for) below which recall returns nothing. Each model has its own similarity scale,
 * so each value is calibrated on that model's score distributions from `skillsmith eval`
 * (bench/results/2026-12-01-recall-threshold-and-acceptance.md) and kept in its profile
 * (src/embedding/model-profiles.ts). A model without a profile needs SKILLSMITH_RECALL_THRESHOLD.
 */
export function defaultRecallThreshold(modelId: string): number | undefined {
  return modelProfile(modelId)?.recallThreshold;
}
