/**
 * How alike two procedures' tool sequences are, by tool name and order: consecutive repeats (a
 * retried call) are collapsed first, then the longest common subsequence is scored Dice-style,
 * 2·LCS / (|a| + |b|), so one optional step in a four-step procedure still scores 0.89 while two
 * three-step procedures that share one tool score 0.33. 1 means the same procedure.
 */

/** Consecutive calls of the same tool are one step: a retry does not make a new procedure. */
export function collapseRepeats(tools: readonly string[]): string[] {
  return tools.filter((tool, index) => index === 0 || tools[index - 1] !== tool);
}

function longestCommonSubsequence(a: readonly string[], b: readonly string[]): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const left of a) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 0; j < b.length; j++) current[j + 1] = left === b[j] ? previous[j]! + 1 : Math.max(previous[j + 1]!, current[j]!);
    previous = current;
  }
  return previous[b.length]!;
}

export function toolSequenceSimilarity(a: readonly string[], b: readonly string[]): number {
  const left = collapseRepeats(a);
  const right = collapseRepeats(b);
  if (left.length + right.length === 0) return 1;
  return (2 * longestCommonSubsequence(left, right)) / (left.length + right.length);
}
