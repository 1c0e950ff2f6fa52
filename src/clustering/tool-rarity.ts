/**
 * How much sharing a tool says about two runs doing the same job: its rarity across the tenant's
 * runs. A tool every task calls (send an email, search the web) says little; a tool only one
 * task calls says much. An inverse document frequency, scaled so that a tool called by no more
 * runs than the smallest recurring family (the clustering's minimum occurrences) weighs 1:
 * r(tool) = ln(T / (df + 1)) / ln(T / (m + 1)), capped at 1, where df is how many runs called it
 * successfully, m the family size, and T = N + N₀ the runs.
 *
 * N₀ is a prior: the runs are read as if beside N₀ runs that call none of their tools, so a
 * small tenant whose every run follows one procedure (where df = N) still gets evidence from
 * it, and a tenant's first runs do not swing the weights. The floor keeps every weight > 0.
 */
export const RARITY_PRIOR_RUNS = 100;
const RARITY_FLOOR = 0.05;

/** Each tool's rarity over a set of runs' successful tool calls, for families of at least `familySize` runs. */
export function toolRarity(runs: ReadonlyArray<readonly string[]>, familySize: number): (tool: string) => number {
  const documentFrequency = new Map<string, number>();
  for (const tools of runs) for (const tool of new Set(tools)) documentFrequency.set(tool, (documentFrequency.get(tool) ?? 0) + 1);
  const total = runs.length + RARITY_PRIOR_RUNS;
  const scale = Math.log(total / (Math.max(1, familySize) + 1));
  return (tool) => Math.min(1, Math.max(RARITY_FLOOR, Math.log(total / ((documentFrequency.get(tool) ?? 0) + 1)) / scale));
}
