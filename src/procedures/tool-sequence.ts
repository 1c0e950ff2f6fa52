/**
 * How alike two procedures' tool sequences are, by tool name and order: the longest common
 * subsequence scored Dice-style, 2·LCS / (|a| + |b|), so one optional step in a four-step procedure
 * still scores 0.89 while two three-step procedures that share one tool score 0.33. 1 means the
 * same procedure. The sequences are of successful calls, as the clustering compares runs: a
 * retried call already left its failed attempt out, and two consecutive successful calls of one
 * tool stay two steps (details of two vehicles are not a retry of one; collapsing them made
 * procedures that differ in how many items they visit the same procedure).
 */

import { toolSequenceSimilarity as procedureTraceSimilarity } from '../clustering/tool-sequence-similarity.ts';

export function toolSequenceSimilarity(a: readonly string[], b: readonly string[]): number {
  return procedureTraceSimilarity({ tools: a }, { tools: b });
}
