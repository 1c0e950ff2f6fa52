import type { Procedure } from '../procedures/procedure.ts';
import { toolsRepeatedDifferently } from '../clustering/repeated-tools.ts';
import { cosine } from '../clustering/cosine.ts';
import { toolSequenceSimilarity } from '../procedures/tool-sequence.ts';

/**
 * Mem0's decision without DELETE, plus Zep's lineage, judged by procedure: a qualifying cluster
 * against the existing procedures — by tool sequence and by the goals each was learned from,
 * never by the wording of a description — becomes
 * - UPDATE (a new revision of the same skill, with the runs it had not counted yet) or NOOP
 *   (nothing new) when it is the same procedure: the same sequence of successful calls, whatever
 *   its goals read like; one that differs only by steps the cluster's own successful runs, or
 *   the runs the procedure counted, show to be optional (some took them, some did not — a split
 *   cluster that happens to hold only runs without the step still meets a record showing both);
 *   or, for the same kind of goal, one that differs by one optional step (one step added,
 *   nothing else changed; sequence similarity ≥ 0.8) or only in the
 *   order of its steps (an agent that cancelled before it listed: the skill keeps the order most
 *   runs took). Identical procedures never fork a second live skill.
 * - SUPERSEDE or NOOP when it is a different procedure for the same job (the goals it was learned
 *   from all but interchangeable): the stronger track record by its Wilson lower bound wins.
 * - ADD otherwise: a different tool sequence is a different procedure, never absorbed — unless
 *   live procedures already learned from its successful runs (settleAlreadyLearned: NOOP).
 */

/** One optional step in a procedure of four or more steps still scores ≥ 0.8 (tool-sequence.ts). */
export const SAME_PROCEDURE_SEQUENCE_SIMILARITY = 0.8;
/**
 * Goal centroids this alike mean the same job. Measured on NESTFUL with all-MiniLM-L6-v2: of the
 * 6,775 pairs of recurring families with different tool sequences, 164 have centroid cosine ≥ 0.7,
 * 5 ≥ 0.9 (car searches with and without a booking summary) and none ≥ 0.95 — goals that read
 * alike are common, interchangeable ones are not, and supersede must stay the rare case.
 */
export const SAME_JOB_GOAL_SIMILARITY = 0.95;
/**
 * Goals this close to a procedure's goals, relative to how close its goals are to each other
 * (goalAffinity), are the same kind of goal. A few runs' goals drawn from the same job score ~1
 * whatever the job's spread; the cosine of two centroids does not — a varied job's centroid is
 * short, so three paraphrases of it scored 0.80 against it while pairs of goals of one job clear τ.
 */
export const SAME_KIND_GOAL_AFFINITY = 0.9;
/** 95 % confidence for the track-record comparison. */
const WILSON_Z = 1.96;

export interface TrackRecord {
  successCount: number;
  attemptCount: number;
}

export interface ClusterProfile extends TrackRecord {
  /** The consensus tool names of the cluster's successful runs. */
  tools: string[];
  /** Tools some but not all of the cluster's successful runs called (observedOptionalTools). */
  optionalTools?: readonly string[];
  /** Mean goal embedding of its successful runs. */
  goalCentroid: Float32Array | null;
}

export interface ProcedureProfile {
  procedure: Procedure;
  /** Mean goal embedding of the runs it was learned from; null when none is stored for the model. */
  goalCentroid: Float32Array | null;
  /** Tools some but not all of the successful runs it counted called (observedOptionalTools of its record). */
  optionalTools?: readonly string[];
}

export interface ReconcileThresholds {
  /** Goals this alike are the same kind of goal (the clustering τ): an optional step does not make another procedure for them. */
  sameKindOfGoal: number;
  /** Goals this alike are the same job, so that two different procedures compete for it. */
  sameJob: number;
}

export function reconcileThresholds(synthesis: { similarityTau: number }): ReconcileThresholds {
  return { sameKindOfGoal: synthesis.similarityTau, sameJob: Math.max(synthesis.similarityTau, SAME_JOB_GOAL_SIMILARITY) };
}

export interface ProcedureMatch {
  relation: 'same-procedure' | 'same-job';
  target: Procedure;
  sequenceSimilarity: number;
  /** The sequences differ only by steps the cluster's runs show to be optional. */
  optionalApart: boolean;
  /** null when either side has no goal centroid. */
  goalSimilarity: number | null;
}

export type ReconcileDecision =
  | { action: 'add'; reason: string }
  | { action: 'update'; target: Procedure; reason: string }
  | { action: 'noop'; target: Procedure; reason: string }
  | { action: 'supersede'; weaker: Procedure; reason: string };

/**
 * How close a cluster's goals are to a procedure's, relative to how close the procedure's goals are
 * to each other: the mean pairwise cosine between the two sets of (unit) goal vectors over the
 * mean pairwise cosine within the procedure's, i.e. c·p / p·p for their unnormalised means.
 */
export function goalAffinity(clusterMean: Float32Array, procedureMean: Float32Array): number {
  let cross = 0;
  let within = 0;
  for (let index = 0; index < procedureMean.length; index++) {
    cross += clusterMean[index]! * procedureMean[index]!;
    within += procedureMean[index]! * procedureMean[index]!;
  }
  return within === 0 ? 0 : cross / within;
}

/** Wilson score interval's lower bound: what the success rate is at least, given how many attempts back it. */
export function wilsonLowerBound({ successCount, attemptCount }: TrackRecord): number {
  if (attemptCount === 0) return 0;
  const z2 = WILSON_Z * WILSON_Z;
  const rate = successCount / attemptCount;
  const centre = rate + z2 / (2 * attemptCount);
  const margin = WILSON_Z * Math.sqrt((rate * (1 - rate)) / attemptCount + z2 / (4 * attemptCount * attemptCount));
  return (centre - margin) / (1 + z2 / attemptCount);
}

const isLive = (procedure: Procedure) => procedure.supersededBy === null;

/**
 * The tools these runs called a varying number of times (each run: the tools of its successful
 * calls): some runs not at all — an optional step — or some more often than others — a loop over
 * however many items there were. Runs pursuing the same goals that take a step and do not, or
 * repeat it more or less, are the evidence that its number is free for those goals, whatever
 * other goals read like. (findRecordedOptionalTools asks the store the same of a procedure's runs.)
 */
export function observedOptionalTools(runs: ReadonlyArray<readonly string[]>): string[] {
  const callCounts = new Map<string, number[]>();
  runs.forEach((tools, run) => {
    for (const tool of tools) {
      const counts = callCounts.get(tool) ?? new Array<number>(runs.length).fill(0);
      counts[run]! += 1;
      callCounts.set(tool, counts);
    }
  });
  return [...callCounts]
    .filter(([, counts]) => counts.some((count) => count !== counts[0]))
    .map(([tool]) => tool)
    .sort();
}

/** Two sequences are the same procedure up to optional steps when, without those tools, what remains is the same non-empty sequence. */
export function sameUpToOptionalSteps(a: readonly string[], b: readonly string[], optional: readonly string[]): boolean {
  if (optional.length === 0) return false;
  const skip = new Set(optional);
  const core = (tools: readonly string[]) => tools.filter((tool) => !skip.has(tool));
  const coreA = core(a);
  const coreB = core(b);
  return coreA.length > 0 && coreA.length === coreB.length && coreA.every((tool, index) => tool === coreB[index]);
}

/**
 * One sequence is the other with one step added (an optional step taken), nothing else changed.
 * A step of a tool the other already calls is one more repetition, not an optional step: how many
 * times a procedure repeats a call is part of it (an agent asked for three hotels' policies looks
 * up three), unless either side's runs show the number varies (observedOptionalTools).
 */
export function oneStepApart(a: readonly string[], b: readonly string[]): boolean {
  const [shorter, longer] = a.length < b.length ? [a, b] : [b, a];
  if (longer.length !== shorter.length + 1) return false;
  const skip = longer.findIndex((tool, index) => tool !== shorter[index]);
  const added = longer[skip === -1 ? shorter.length : skip]!;
  return !shorter.includes(added) && (skip === -1 || shorter.every((tool, index) => tool === longer[index < skip ? index : index + 1]));
}

/**
 * The same steps, each as many times, in another order — apart from steps either side's runs show
 * optional (`optional`), as for sameUpToOptionalSteps.
 */
export function sameStepsReordered(a: readonly string[], b: readonly string[], optional: readonly string[] = []): boolean {
  const skip = new Set(optional);
  const sorted = (tools: readonly string[]) =>
    tools
      .filter((tool) => !skip.has(tool))
      .sort()
      .join('\u0000');
  const coreA = sorted(a);
  return coreA.length > 0 && coreA === sorted(b);
}

/**
 * The existing procedure this cluster is, or competes with: the same procedure first (identical
 * sequence, else one optional step apart for the same kind of goal; a live one before a
 * superseded one, then the most alike), else the live procedure doing the same job with the most
 * alike goals.
 */
export function matchProcedure(
  cluster: ClusterProfile,
  procedures: ProcedureProfile[],
  thresholds: ReconcileThresholds,
): ProcedureMatch | undefined {
  const scored = procedures.map(({ procedure, goalCentroid, optionalTools }) => {
    const tools = procedure.toolSequence.map((step) => step.tool);
    // Either side's own runs are evidence: the cluster's, or the runs the procedure counted.
    const optional = [...(cluster.optionalTools ?? []), ...(optionalTools ?? [])];
    const centroids =
      cluster.goalCentroid && goalCentroid && goalCentroid.length === cluster.goalCentroid.length
        ? { cluster: cluster.goalCentroid, procedure: goalCentroid }
        : null;
    return {
      target: procedure,
      sequenceSimilarity: toolSequenceSimilarity(cluster.tools, tools),
      optionalApart: sameUpToOptionalSteps(cluster.tools, tools, optional),
      oneStepApart: oneStepApart(cluster.tools, tools),
      reordered: sameStepsReordered(cluster.tools, tools, optional),
      goalSimilarity: centroids ? cosine(centroids.cluster, centroids.procedure) : null,
      goalAffinity: centroids ? goalAffinity(centroids.cluster, centroids.procedure) : null,
    };
  });
  const goal = (candidate: { goalSimilarity: number | null }) => candidate.goalSimilarity ?? -1;
  const sameKindOfGoal = (candidate: { goalSimilarity: number | null; goalAffinity: number | null }) =>
    goal(candidate) >= thresholds.sameKindOfGoal || (candidate.goalAffinity ?? -1) >= SAME_KIND_GOAL_AFFINITY;
  const same = scored
    .filter(
      (candidate) =>
        candidate.sequenceSimilarity === 1 ||
        candidate.optionalApart ||
        (((candidate.sequenceSimilarity >= SAME_PROCEDURE_SEQUENCE_SIMILARITY && candidate.oneStepApart) || candidate.reordered) &&
          sameKindOfGoal(candidate)),
    )
    .sort(
      (a, b) =>
        Number(isLive(b.target)) - Number(isLive(a.target)) ||
        b.sequenceSimilarity - a.sequenceSimilarity ||
        goal(b) - goal(a) ||
        a.target.name.localeCompare(b.target.name),
    );
  if (same[0]) return { relation: 'same-procedure', ...same[0] };
  // A procedure that repeats a call another number of times does a differently sized job, not the
  // same job another way: it never competes for it (an agent asked for two hotels' policies, not three).
  const sameJob = scored
    .filter(
      (candidate) =>
        isLive(candidate.target) &&
        goal(candidate) >= thresholds.sameJob &&
        toolsRepeatedDifferently([cluster.tools, candidate.target.toolSequence.map((step) => step.tool)]) === null,
    )
    .sort((a, b) => goal(b) - goal(a) || a.target.name.localeCompare(b.target.name));
  return sameJob[0] ? { relation: 'same-job', ...sameJob[0] } : undefined;
}

const formatRecord = (record: TrackRecord) =>
  `${record.successCount}/${record.attemptCount}, lower bound ${wilsonLowerBound(record).toFixed(2)}`;

const similarity = (match: ProcedureMatch) =>
  `sequence ${match.sequenceSimilarity.toFixed(2)}${match.optionalApart ? ' (the rest are steps its runs show optional)' : ''}, ` +
  `goals ${match.goalSimilarity === null ? 'n/a' : match.goalSimilarity.toFixed(2)}`;

/**
 * An ADD needs runs no live procedure has learned from: at least `minOccurrences` successful runs
 * (what qualification asks of a cluster). A cluster whose successful runs other procedures already
 * count is not a new procedure — it would be a second live skill taught by the same runs, and the
 * next full pass over the same data would add it again — so it is a NOOP against the procedure that
 * counts the most of them. `learners` maps a run to the live procedures counting it as a success.
 */
export function settleAlreadyLearned(
  decision: ReconcileDecision,
  successfulRunIds: readonly string[],
  learners: ReadonlyMap<string, readonly Procedure[]>,
  minOccurrences: number,
): ReconcileDecision {
  if (decision.action !== 'add') return decision;
  const held = new Map<string, { procedure: Procedure; runs: number }>();
  let unlearned = 0;
  for (const runId of successfulRunIds) {
    const procedures = learners.get(runId) ?? [];
    if (procedures.length === 0) unlearned += 1;
    for (const procedure of procedures) held.set(procedure.id, { procedure, runs: (held.get(procedure.id)?.runs ?? 0) + 1 });
  }
  const [holder] = [...held.values()].sort((a, b) => b.runs - a.runs || a.procedure.name.localeCompare(b.procedure.name));
  if (!holder || unlearned >= minOccurrences) return decision;
  return {
    action: 'noop',
    target: holder.procedure,
    reason:
      `only ${unlearned} of its ${successfulRunIds.length} successful runs are not learned by a live procedure yet ` +
      `(minOccurrences ${minOccurrences}); ${holder.procedure.name} counts ${holder.runs} of them`,
  };
}

/**
 * The decision, given the match and how many of the cluster's counted runs the matched procedure
 * has not counted yet (a run is counted once, however many passes see it).
 */
export function decide(cluster: ClusterProfile, match: ProcedureMatch | undefined, freshRuns: number): ReconcileDecision {
  if (!match) return { action: 'add', reason: 'no existing procedure with this tool sequence or for the same job' };
  const { target } = match;
  if (match.relation === 'same-procedure') {
    if (freshRuns === 0)
      return { action: 'noop', target, reason: `same procedure as ${target.name} (${similarity(match)}); every run already counted` };
    return {
      action: 'update',
      target,
      reason: `same procedure as ${target.name} (${similarity(match)}); ${freshRuns} runs not counted yet`,
    };
  }
  const job = `a different procedure for the same job as ${target.name} (${similarity(match)})`;
  if (wilsonLowerBound(cluster) > wilsonLowerBound(target)) {
    return {
      action: 'supersede',
      weaker: target,
      reason: `${job} with a stronger track record (${formatRecord(cluster)} vs ${formatRecord(target)})`,
    };
  }
  return { action: 'noop', target, reason: `${job} with a weaker track record (${formatRecord(cluster)} vs ${formatRecord(target)})` };
}
