/**
 * Calibrates a model's recall threshold from `skillsmith eval --json` reports run with the
 * threshold off (SKILLSMITH_RECALL_THRESHOLD=-1), one per corpus, pooled:
 *
 *   npx tsx bench/recall-calibration.ts eval-generated.json eval-nestful.json
 *
 * Each report carries every goal's best recall score by kind (in-sample, held-out goals whose
 * family has a skill, negatives). The rule (docs/evaluation.md): the threshold sits halfway between
 * the highest negative score and the 5th percentile of the held-out scores, when that percentile
 * is higher; otherwise just above the highest negative (no false positive outranks recall). It
 * reads no labels beyond the kinds, and pools every corpus given, so no one corpus decides.
 * Prints the distributions, the threshold and what each report's rates would be at it.
 */
import { readFile } from 'node:fs/promises';
import type { EvalReport } from '../src/eval/run-eval.ts';

const NEGATIVE_MARGIN = 0.02;
const HELDOUT_QUANTILE = 0.05;

function quantile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(fraction * (sorted.length - 1))))] ?? 0;
}

const round = (value: number) => Math.round(value * 1000) / 1000;
const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: recall-calibration.ts EVAL.json [EVAL.json …]');
const reports = await Promise.all(files.map(async (file) => JSON.parse(await readFile(file, 'utf8')) as EvalReport));
const pooled = {
  inSample: reports.flatMap((report) => report.recallScores.inSample),
  heldoutCovered: reports.flatMap((report) => report.recallScores.heldoutCovered),
  negatives: reports.flatMap((report) => report.recallScores.negatives),
};
const highestNegative = Math.max(...pooled.negatives);
const heldoutLow = quantile(pooled.heldoutCovered, HELDOUT_QUANTILE);
const threshold = round(heldoutLow > highestNegative ? (highestNegative + heldoutLow) / 2 : highestNegative + NEGATIVE_MARGIN);

const share = (values: readonly number[]) =>
  values.length === 0 ? 0 : round(values.filter((value) => value >= threshold).length / values.length);
const summary = (values: readonly number[]) => ({
  n: values.length,
  min: round(Math.min(...values)),
  p5: round(quantile(values, 0.05)),
  p50: round(quantile(values, 0.5)),
  max: round(Math.max(...values)),
});
process.stdout.write(
  `${JSON.stringify(
    {
      model: reports.map((report) => report.settings.embeddingModel),
      distributions: {
        inSample: summary(pooled.inSample),
        heldoutCovered: summary(pooled.heldoutCovered),
        negatives: summary(pooled.negatives),
      },
      rule: { highestNegative: round(highestNegative), heldoutP5: round(heldoutLow) },
      threshold,
      atThreshold: files.map((file, index) => ({
        file,
        inSampleAbove: share(reports[index]!.recallScores.inSample),
        heldoutCoveredAbove: share(reports[index]!.recallScores.heldoutCovered),
        negativesAbove: share(reports[index]!.recallScores.negatives),
      })),
    },
    null,
    2,
  )}\n`,
);
