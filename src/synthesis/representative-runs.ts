import { stem, wordsOf, isStopWord } from './goal-words.ts';

/**
 * A typical, stratified sample of a cluster's runs: each run's typicality is its mean distance
 * to the others (the medoid is the most typical), where the distance combines the tool
 * sequences (1 − normalised longest common subsequence, so an optional step or a retry moves a
 * run only a little) and the goals' content words (Jaccard). The sample takes runs from every
 * distinct tool sequence in proportion to its share of the cluster (at least one each, the most
 * frequent first), the most typical runs of each. Deterministic: ties break by run id.
 */

export interface SampledRun {
  runId: string;
  goal: string;
  tools: string[];
}

function lcsLength(a: string[], b: string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = a[i - 1] === b[j - 1] ? diagonal + 1 : Math.max(row[j]!, row[j - 1]!);
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function sequenceDistance(a: string[], b: string[]): number {
  const longest = Math.max(a.length, b.length);
  return longest === 0 ? 0 : 1 - lcsLength(a, b) / longest;
}

function goalDistance(a: Set<string>, b: Set<string>): number {
  const union = new Set([...a, ...b]).size;
  if (union === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return 1 - shared / union;
}

const contentWords = (goal: string) =>
  new Set(
    wordsOf(goal)
      .filter((word) => !isStopWord(word))
      .map(stem),
  );

/** The runs in order of typicality, most typical (the medoid) first. */
export function byTypicality<T extends SampledRun>(runs: T[]): T[] {
  const words = runs.map((run) => contentWords(run.goal));
  const meanDistance = runs.map((run, i) => {
    let total = 0;
    runs.forEach((other, j) => {
      if (i !== j) total += sequenceDistance(run.tools, other.tools) + goalDistance(words[i]!, words[j]!);
    });
    return runs.length > 1 ? total / (runs.length - 1) : 0;
  });
  return runs
    .map((run, index) => ({ run, distance: meanDistance[index]! }))
    .sort((a, b) => a.distance - b.distance || (a.run.runId < b.run.runId ? -1 : 1))
    .map(({ run }) => run);
}

export function representativeSample<T extends SampledRun>(runs: T[], size: number): T[] {
  const typical = byTypicality(runs);
  const strata = new Map<string, T[]>();
  for (const run of typical) {
    const key = run.tools.join('\u0000');
    strata.set(key, [...(strata.get(key) ?? []), run]);
  }
  const ordered = [...strata.values()].sort((a, b) => b.length - a.length || (a[0]!.runId < b[0]!.runId ? -1 : 1));
  const chosen = new Set<T>();
  for (const stratum of ordered) {
    const quota = Math.max(1, Math.round((size * stratum.length) / Math.max(1, runs.length)));
    for (const run of stratum.slice(0, quota)) if (chosen.size < size) chosen.add(run);
  }
  for (const run of typical) if (chosen.size < size) chosen.add(run);
  return typical.filter((run) => chosen.has(run));
}
