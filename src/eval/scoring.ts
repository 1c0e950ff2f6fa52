/**
 * The learning scoreboard's arithmetic (`skillsmith eval`), as pure functions over run ids,
 * family labels and what the store holds: how well a pass's clusters follow the labelled task
 * families, whether each recurring family became exactly one clean live skill, and whether
 * recall gives a family's goals that skill back. Definitions are documented in docs/evaluation.md.
 */

/** A run's label: the task family it belongs to, or null for a one-off that no family covers. */
export type FamilyLabel = string | null;

/** A skill "comes from" a family when at least this share of its provenance runs carry the family's label. */
export const OWNERSHIP_SHARE = 0.8;
/** A recurring family (issue #10): at least this many runs with at least RECURRING_MIN_STEPS steps each. */
export const RECURRING_MIN_RUNS = 3;
export const RECURRING_MIN_STEPS = 3;

/** What scoring needs to know about one labelled run. */
export interface LabelledRun {
  runId: string;
  family: FamilyLabel;
  status: 'completed' | 'failed' | 'cancelled';
  /** Tool calls that succeeded. */
  successfulSteps: number;
}

/** A live skill (enabled, not superseded) and the run ids it was learned from. */
export interface LiveSkill {
  name: string;
  runIds: readonly string[];
}

export interface ClusterPurity {
  clusters: number;
  /** Runs in clusters of two or more (singletons are not clusters). */
  clusteredRuns: number;
  /**
   * Σ over clusters of the largest same-family count, over clusteredRuns; a run labelled null
   * is a class of its own (it matches nothing), so a cluster of one-offs is not pure. 1 when
   * there are no clusters.
   */
  purity: number;
}

export function clusterPurity(clusters: ReadonlyArray<readonly string[]>, familyOf: (runId: string) => FamilyLabel): ClusterPurity {
  let clusteredRuns = 0;
  let agreeing = 0;
  let counted = 0;
  for (const runIds of clusters) {
    if (runIds.length < 2) continue;
    counted += 1;
    clusteredRuns += runIds.length;
    const counts = new Map<string, number>();
    let largest = 0;
    for (const runId of runIds) {
      const family = familyOf(runId);
      if (family === null) {
        largest = Math.max(largest, 1);
        continue;
      }
      const count = (counts.get(family) ?? 0) + 1;
      counts.set(family, count);
      largest = Math.max(largest, count);
    }
    agreeing += largest;
  }
  return { clusters: counted, clusteredRuns, purity: clusteredRuns === 0 ? 1 : agreeing / clusteredRuns };
}

/**
 * The recurring families and their qualifying run counts: completed runs with at least
 * RECURRING_MIN_STEPS successful steps, at least RECURRING_MIN_RUNS of them per family.
 */
export function recurringFamilies(runs: Iterable<LabelledRun>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const run of runs) {
    if (run.family === null || run.status !== 'completed' || run.successfulSteps < RECURRING_MIN_STEPS) continue;
    counts.set(run.family, (counts.get(run.family) ?? 0) + 1);
  }
  return new Map([...counts].filter(([, count]) => count >= RECURRING_MIN_RUNS).sort(([a], [b]) => a.localeCompare(b)));
}

export interface SkillComposition {
  name: string;
  runs: number;
  /** The family most of its provenance runs carry (null when none is labelled or the plurality is unlabelled). */
  family: FamilyLabel;
  /** That family's share of the provenance runs. */
  share: number;
  /** Distinct labels among its provenance runs (each unlabelled run counts as one). */
  families: number;
}

export function skillComposition(skill: LiveSkill, familyOf: (runId: string) => FamilyLabel): SkillComposition {
  const counts = new Map<string, number>();
  let unlabelled = 0;
  for (const runId of skill.runIds) {
    const family = familyOf(runId);
    if (family === null) unlabelled += 1;
    else counts.set(family, (counts.get(family) ?? 0) + 1);
  }
  let family: FamilyLabel = null;
  let largest = unlabelled > 0 ? 1 : 0;
  for (const [candidate, count] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    if (count > largest) {
      family = candidate;
      largest = count;
    }
  }
  const runs = skill.runIds.length;
  return { name: skill.name, runs, family, share: runs === 0 ? 0 : largest / runs, families: counts.size + unlabelled };
}

export interface SkillScores {
  compositions: SkillComposition[];
  /** Family → the live skills with ≥ OWNERSHIP_SHARE of their provenance from it. */
  owners: Map<string, string[]>;
  /** Recurring families with exactly one owning live skill. */
  recalledFamilies: string[];
  /** Recurring families without exactly one owner. */
  missedFamilies: string[];
  /** Live skills whose provenance has < OWNERSHIP_SHARE from any one family. */
  mixingSkills: SkillComposition[];
  /** Families that are the plurality family of more than one live skill, with those skills. */
  familiesWithSeveralSkills: Map<string, string[]>;
}

export function scoreSkills(
  skills: readonly LiveSkill[],
  familyOf: (runId: string) => FamilyLabel,
  recurring: ReadonlyMap<string, number>,
): SkillScores {
  const compositions = skills.map((skill) => skillComposition(skill, familyOf));
  const owners = new Map<string, string[]>();
  const byPlurality = new Map<string, string[]>();
  for (const composition of compositions) {
    if (composition.family === null) continue;
    byPlurality.set(composition.family, [...(byPlurality.get(composition.family) ?? []), composition.name]);
    if (composition.share >= OWNERSHIP_SHARE) owners.set(composition.family, [...(owners.get(composition.family) ?? []), composition.name]);
  }
  const recurringNames = [...recurring.keys()].sort((a, b) => a.localeCompare(b));
  return {
    compositions,
    owners,
    recalledFamilies: recurringNames.filter((family) => owners.get(family)?.length === 1),
    missedFamilies: recurringNames.filter((family) => owners.get(family)?.length !== 1),
    mixingSkills: compositions.filter((composition) => composition.share < OWNERSHIP_SHARE),
    familiesWithSeveralSkills: new Map([...byPlurality].filter(([, names]) => names.length > 1).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** One recall query and the skill names it returned, best first. */
export interface RecallCase {
  goal: string;
  family: FamilyLabel;
  returned: readonly string[];
}

export interface RecallScores {
  /** Goals with a family label. */
  positives: number;
  /** Positives whose family has an owning live skill: the goals recall can get right. */
  covered: number;
  /** Positives whose first returned skill owns their family. */
  top1: number;
  /** Positives with an owner of their family among the first two returned. */
  top2: number;
  /** Positives for which recall returned anything at all (a miss is then a wrong skill, not silence). */
  answered: number;
  /** Positives whose first returned skill does not own their family: a wrong skill rather than none. */
  wrongSkill: number;
  /** Of those, goals whose family has no owning skill at all (recall should have abstained). */
  wrongSkillUncovered: number;
  /** Goals labelled null: no skill should come back. */
  negatives: number;
  /** Negatives for which anything came back. */
  falsePositives: number;
  /** Every goal recall did not get right (a positive without its family's skill first, a negative answered), in input order. */
  misses: RecallMiss[];
}

/** A held-out goal recall got wrong: what came back, and the skills that own its family (none: it should have abstained). */
export interface RecallMiss {
  goal: string;
  family: FamilyLabel;
  returned: readonly string[];
  owners: readonly string[];
}

/** Held-out recall: a hit when a returned skill owns the goal's family (≥ OWNERSHIP_SHARE of its provenance). */
export function scoreRecall(cases: readonly RecallCase[], owners: ReadonlyMap<string, readonly string[]>): RecallScores {
  const scores: RecallScores = {
    positives: 0,
    covered: 0,
    top1: 0,
    top2: 0,
    answered: 0,
    wrongSkill: 0,
    wrongSkillUncovered: 0,
    negatives: 0,
    falsePositives: 0,
    misses: [],
  };
  for (const { goal, family, returned } of cases) {
    if (family === null) {
      scores.negatives += 1;
      if (returned.length > 0) {
        scores.falsePositives += 1;
        scores.misses.push({ goal, family, returned, owners: [] });
      }
      continue;
    }
    scores.positives += 1;
    if (returned.length > 0) scores.answered += 1;
    const owning = new Set(owners.get(family) ?? []);
    if (owning.size > 0) scores.covered += 1;
    if (returned[0] !== undefined && owning.has(returned[0])) scores.top1 += 1;
    else {
      if (returned[0] !== undefined) {
        scores.wrongSkill += 1;
        if (owning.size === 0) scores.wrongSkillUncovered += 1;
      }
      // Silence is a miss only where a skill owns the family: elsewhere it is the right answer.
      if (returned[0] !== undefined || owning.size > 0) scores.misses.push({ goal, family, returned, owners: [...owning] });
    }
    if (returned.slice(0, 2).some((name) => owning.has(name))) scores.top2 += 1;
  }
  return scores;
}

/** In-sample recall: the goals a skill was learned from, and how many get that same skill back first. */
export function scoreInSample(cases: ReadonlyArray<{ skill: string; returned: readonly string[] }>): { goals: number; top1: number } {
  return { goals: cases.length, top1: cases.filter((item) => item.returned[0] === item.skill).length };
}

/** Each goal's best recall score (the first returned skill's), by kind of goal: what the recall threshold is calibrated on. */
export interface RecallScoreDistributions {
  /** Goals a live skill was learned from, scored with the threshold off. */
  inSample: number[];
  /** Held-out goals of a family that has an owning live skill. */
  heldoutCovered: number[];
  /** Held-out goals nothing should match. */
  negatives: number[];
}

/** A share as a number in [0, 1], 0 for an empty denominator. */
export const rate = (hits: number, total: number): number => (total === 0 ? 0 : hits / total);
