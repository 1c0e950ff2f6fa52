/**
 * The recall threshold's default per embedding model: the best cosine (goal against what a
 * procedure is for) below which recall returns nothing. Each model has its own similarity scale,
 * so each value is calibrated on that model's score distributions from `skillsmith eval`
 * (in-sample, held-out and negative goals; bench/README.md, "Calibrating the recall threshold").
 * A model not listed here needs SKILLSMITH_RECALL_THRESHOLD.
 */
const calibratedRecallThresholds: ReadonlyMap<string, number> = new Map([
  // Calibrated on both eval corpora (bench/README.md).
  ['sentence-transformers/all-MiniLM-L6-v2', 0.415],
  // NOT calibrated here: the model cannot be obtained offline on the development machines. Nomic's
  // cosines run higher than MiniLM's (it clusters at τ 0.82 where MiniLM needs 0.5), so its default sits
  // correspondingly higher; calibrate it with the procedure in bench/README.md before relying on it.
  ['nomic-ai/nomic-embed-text-v1.5', 0.7],
]);

export function defaultRecallThreshold(modelId: string): number | undefined {
  return calibratedRecallThresholds.get(modelId);
}
