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
  const consistency = companionConsistency(runs, documentFrequency);
  return (tool) =>
    Math.max(
      RARITY_FLOOR,
      Math.min(1, Math.log(total / ((documentFrequency.get(tool) ?? 0) + 1)) / scale) *
        Math.min(1, (consistency.get(tool) ?? 1) / CONSISTENT_COMPANIONS),
    );
}

/** A tool whose companions are shared this much is taken to belong to one procedure. */
const CONSISTENT_COMPANIONS = 0.5;

/**
 * How consistently each tool keeps the same company: over the runs that call it, p(v) is the share
 * that also call tool v, and the consistency Σ p(v)² / Σ p(v) is the mean share of a companion —
 * about 1 for a step of one procedure (its runs call the same other tools), about 1 / F for a tool
 * called off-plan by F unrelated procedures (a shell command, a note, a web search run here and
 * there). Rare is not enough to be evidence: an off-plan call is rare too.
 */
function companionConsistency(runs: ReadonlyArray<readonly string[]>, documentFrequency: Map<string, number>): Map<string, number> {
  const together = new Map<string, Map<string, number>>();
  for (const tools of runs) {
    const distinct = [...new Set(tools)];
    for (const tool of distinct) {
      let companions = together.get(tool);
      if (!companions) together.set(tool, (companions = new Map<string, number>()));
      for (const other of distinct) if (other !== tool) companions.set(other, (companions.get(other) ?? 0) + 1);
    }
  }
  const consistency = new Map<string, number>();
  for (const [tool, companions] of together) {
    const calls = documentFrequency.get(tool)!;
    let shares = 0;
    let squares = 0;
    for (const count of companions.values()) {
      shares += count / calls;
      squares += (count / calls) ** 2;
    }
    consistency.set(tool, shares === 0 ? 1 : squares / shares);
  }
  return consistency;
}
