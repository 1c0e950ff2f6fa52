import { loadGoalEmbeddings, meanGoalEmbedding } from '../embedding/goal-embedding-repository.ts';
import { shapesDiffer } from '../clustering/call-shapes.ts';
import { EVIDENCE_PER_VARIANT, goalsDetermineGroups, SHAPE_SIGNIFICANCE } from '../clustering/goal-determined-variants.ts';
import { loadLearnedGoalVectors } from '../procedures/procedure-goal-vector-repository.ts';
import {
  findLiveLearners,
  findProcedureById,
  findRecordedOptionalTools,
  listProceduresWithGoalCentroids,
} from '../procedures/procedure-repository.ts';
import type { ConsensusStep, Procedure } from '../procedures/procedure.ts';
import type { Queryable } from '../store/database.ts';
import { buildClusterEvidence } from './cluster-evidence.ts';
import { countedRunsOf, freshRunsFor } from './cluster-track-record.ts';
import { loadEvidenceRuns } from './evidence-runs.ts';
import type { PassCluster } from './pass-cluster.ts';
import { getPassCluster, listPassClusters, markClusterReconciled } from './pass-repository.ts';
import {
  decide,
  matchProcedure,
  observedOptionalTools,
  settleAlreadyLearned,
  reconcileThresholds,
  type ReconcileDecision,
  type ReconcileThresholds,
} from './reconcile.ts';
import type { SynthesisSettings } from './synthesis-settings.ts';

/**
 * RECONCILE for one qualifying cluster of a pass, before anything is distilled: the cluster's
 * consensus tool sequence and goal centroid against every procedure of the tenant. The decision
 * is recorded on the cluster (idempotent: a retried or replayed step returns the recorded one),
 * so a NOOP costs no distillation and install applies exactly what was decided.
 */

export interface ReconcileClusterDependencies {
  db: Queryable;
  /** The embedding model whose goal vectors the pass clustered. */
  goalModel: string;
  thresholds: ReconcileThresholds;
  minSteps: number;
  /** An ADD needs this many successful runs no live procedure has learned from (qualification's minimum). */
  minOccurrences: number;
}

/** The reconcile step's settings for a tenant: its goal model and the synthesis thresholds. */
export function reconcileSettings(
  goalModel: string,
  synthesis: Pick<SynthesisSettings, 'similarityTau' | 'minSteps' | 'minOccurrences'>,
): Omit<ReconcileClusterDependencies, 'db'> {
  return {
    goalModel,
    thresholds: reconcileThresholds(synthesis),
    minSteps: synthesis.minSteps,
    minOccurrences: synthesis.minOccurrences,
  };
}

export interface ReconcileClusterOutcome {
  decision: 'add' | 'update' | 'noop' | 'supersede' | 'skipped';
  /** The matched procedure's name (UPDATE, NOOP, SUPERSEDE's weaker one); null for ADD. */
  skillName: string | null;
  revision: number | null;
  reason: string;
}

/** For each run a live procedure counts as a success: those procedures. */
async function liveLearnersOf(db: Queryable, tenantId: string, runIds: string[]): Promise<Map<string, Procedure[]>> {
  const learners = await findLiveLearners(db, tenantId, runIds);
  const procedures = new Map<string, Procedure>();
  for (const id of new Set([...learners.values()].flat())) {
    const procedure = await findProcedureById(db, tenantId, id);
    if (procedure) procedures.set(id, procedure);
  }
  return new Map([...learners].map(([runId, ids]) => [runId, ids.flatMap((id) => procedures.get(id) ?? [])]));
}

interface ClusterDecision {
  decision: ReconcileDecision;
  target: Procedure | undefined;
  toolSequence: ConsensusStep[];
}

/**
 * The match, but never a procedure whose steps differ from the cluster's — or whose same steps
 * are given arguments of other names (call-shapes.ts) — when the goals tell the two apart
 * (goalsDetermineGroups, as the clustering's variant split asks): a step taken when the goal asks
 * for it is another job, not an optional step (a flight's details or not), and so is a digest
 * mailed per region beside a board note mailed per quarter. Each such candidate is set aside and
 * the next one tried.
 */
async function matchTellingVariantsApart(
  deps: ReconcileClusterDependencies,
  tenantId: string,
  cluster: PassCluster & { steps: readonly ConsensusStep[] },
  profile: Parameters<typeof matchProcedure>[0],
  procedures: Parameters<typeof matchProcedure>[1],
): Promise<ReturnType<typeof matchProcedure>> {
  let candidates = procedures;
  let clusterGoals: Float32Array[] | undefined;
  for (;;) {
    const match = matchProcedure(profile, candidates, deps.thresholds);
    if (!match || match.relation !== 'same-procedure') return match;
    const byShape = match.sequenceSimilarity === 1;
    if (byShape && !shapesDiffer(cluster.steps, match.target.toolSequence)) return match;
    clusterGoals ??= (
      await loadGoalEmbeddings(deps.db, tenantId, deps.goalModel, { runIds: cluster.successfulRunIds.slice(0, EVIDENCE_PER_VARIANT) })
    ).vectors;
    const procedureGoals = await loadLearnedGoalVectors(deps.db, tenantId, match.target.id, deps.goalModel, EVIDENCE_PER_VARIANT);
    const seed = clusterGoals.length * 7919 + procedureGoals.length;
    const significance = byShape ? SHAPE_SIGNIFICANCE : undefined;
    if (!goalsDetermineGroups([clusterGoals, procedureGoals], seed, undefined, significance)) return match;
    candidates = candidates.filter((candidate) => candidate.procedure.id !== match.target.id);
  }
}

async function decideCluster(
  deps: ReconcileClusterDependencies,
  tenantId: string,
  passId: string,
  cluster: PassCluster,
): Promise<ClusterDecision> {
  const { db } = deps;
  const runs = await loadEvidenceRuns(db, tenantId, cluster.runIds, cluster.successfulRunIds);
  const evidence = buildClusterEvidence(runs, deps.minSteps);
  const counted = await countedRunsOf(db, tenantId, passId, cluster);
  const successful = new Set(cluster.successfulRunIds);
  const profile = {
    tools: evidence.consensusSequence.map((step) => step.tool),
    optionalTools: observedOptionalTools(
      runs.filter((run) => successful.has(run.runId)).map((run) => run.toolCalls.filter((call) => call.success).map((call) => call.tool)),
    ),
    goalCentroid: await meanGoalEmbedding(db, tenantId, deps.goalModel, cluster.successfulRunIds),
    successCount: cluster.successfulRunIds.length,
    attemptCount: counted.length,
  };
  const recordedOptional = await findRecordedOptionalTools(db, tenantId);
  const procedures = (await listProceduresWithGoalCentroids(db, tenantId, deps.goalModel)).map((entry) => ({
    ...entry,
    optionalTools: recordedOptional.get(entry.procedure.id) ?? [],
  }));
  const match = await matchTellingVariantsApart(deps, tenantId, { ...cluster, steps: evidence.consensusSequence }, profile, procedures);
  const fresh = match ? await freshRunsFor(db, tenantId, match.target, counted) : counted;
  const decision = settleAlreadyLearned(
    decide(profile, match, fresh.length),
    cluster.successfulRunIds,
    await liveLearnersOf(db, tenantId, cluster.successfulRunIds),
    deps.minOccurrences,
  );
  const target = decision.action === 'add' ? undefined : decision.action === 'supersede' ? decision.weaker : decision.target;
  return { decision, target, toolSequence: evidence.consensusSequence };
}

async function recordDecision(
  db: Queryable,
  tenantId: string,
  passId: string,
  clusterKey: string,
  decided: ClusterDecision,
): Promise<ReconcileClusterOutcome> {
  const outcome: ReconcileClusterOutcome = {
    decision: decided.decision.action,
    skillName: decided.target?.name ?? null,
    revision: decided.target?.revision ?? null,
    reason: decided.decision.reason,
  };
  await markClusterReconciled(db, tenantId, passId, clusterKey, {
    decision: decided.decision.action,
    targetProcedureId: decided.target?.id ?? null,
    skillName: outcome.skillName,
    revision: outcome.revision,
    reason: outcome.reason,
    toolSequence: decided.toolSequence,
  });
  return outcome;
}

export async function reconcileCluster(
  deps: ReconcileClusterDependencies,
  input: { tenantId: string; passId: string; clusterKey: string },
): Promise<ReconcileClusterOutcome> {
  const { tenantId, passId, clusterKey } = input;
  const cluster = await getPassCluster(deps.db, tenantId, passId, clusterKey);
  if (cluster.status === 'skipped')
    return { decision: 'skipped', skillName: null, revision: null, reason: cluster.skipReason ?? 'skipped' };
  if (cluster.status !== 'pending' && cluster.decision) {
    return { decision: cluster.decision, skillName: cluster.skillName, revision: cluster.revision, reason: cluster.decisionReason ?? '' };
  }
  return recordDecision(deps.db, tenantId, passId, clusterKey, await decideCluster(deps, tenantId, passId, cluster));
}

/**
 * Settles, before the pass spends its budget, every qualifying cluster that is the same procedure
 * as an existing one with no run it has not counted: a NOOP needs no distillation, so it must not
 * take a place in the budget (a full pass over known runs would otherwise redo the same clusters
 * forever). Only NOOPs are recorded here; the others are decided when their turn comes, against
 * what the pass has installed by then.
 */
export async function settleUnchangedClusters(
  deps: ReconcileClusterDependencies,
  input: { tenantId: string; passId: string },
  onCluster?: () => void,
): Promise<number> {
  let settled = 0;
  for (const cluster of await listPassClusters(deps.db, input.tenantId, input.passId)) {
    if (!cluster.qualifying || cluster.status !== 'pending') continue;
    onCluster?.();
    const decided = await decideCluster(deps, input.tenantId, input.passId, cluster);
    if (decided.decision.action !== 'noop') continue;
    await recordDecision(deps.db, input.tenantId, input.passId, cluster.clusterKey, decided);
    settled += 1;
  }
  return settled;
}
