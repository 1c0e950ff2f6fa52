/**
 * How alike two procedures' tool sequences are, by tool name and order: consecutive repeats (a
 * retried call) are collapsed first, then the longest common subsequence is scored Dice-style,
 * 2·LCS / (|a| + |b|), so one optional step in a four-step procedure still scores 0.89 while two
 * three-step procedures that share one tool score 0.33. 1 means the same procedure.
 */

import { toolSequenceSimilarity as procedureTraceSimilarity } from '../clustering/tool-sequence-similarity.ts';

/** Consecutive calls of the same tool are one step: a retry does not make a new procedure. */
export function collapseRepeats(tools: readonly string[]): string[] {
  return tools.filter((tool, index) => index === 0 || tools[index - 1] !== tool);
}

export function toolSequenceSimilarity(a: readonly string[], b: readonly string[]): number {
  return procedureTraceSimilarity({ tools: collapseRepeats(a) }, { tools: collapseRepeats(b) });
}
