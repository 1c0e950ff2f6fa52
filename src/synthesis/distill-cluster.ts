import { findProcedureById, listCountedRuns } from '../procedures/procedure-repository.ts';
import type { Queryable } from '../store/database.ts';
import { buildClusterEvidence } from './cluster-evidence.ts';
import type { Distiller } from './distiller.ts';
import { loadEvidenceRuns } from './evidence-runs.ts';
import { DistillOutputMalformed } from './learned-skill.ts';
import { SkillValidationError } from '../skills/validation-errors.ts';
import { getPassCluster, markClusterDistilled, markClusterSkipped } from './pass-repository.ts';
import { countedRunsOf, freshRunsFor, trackRecordAfter } from './cluster-track-record.ts';

export type DistillOutcome = { status: 'distilled'; name: string } | { status: 'skipped'; reason: string };

/**
 * DISTILL for one cluster of a pass: builds the evidence from its runs — for an UPDATE, from every
 * run of the procedure's record too, so the new revision describes all of its evidence — with the
 * track record the skill will have once installed, asks the distiller, and records the candidate
 * document or the reason the cluster is skipped. Errors reaching the
 * model (LlmUnavailable) propagate: they stop the pass, they do not skip a cluster.
 */
export async function distillCluster(
  db: Queryable,
  distiller: Distiller,
  input: { tenantId: string; passId: string; clusterKey: string; minSteps: number },
  signal?: AbortSignal,
): Promise<DistillOutcome> {
  const cluster = await getPassCluster(db, input.tenantId, input.passId, input.clusterKey);
  if (cluster.status === 'skipped') return { status: 'skipped', reason: cluster.skipReason ?? 'skipped' };
  if (cluster.status !== 'pending' && cluster.candidate) {
    return { status: 'distilled', name: cluster.skillName ?? 'candidate' };
  }
  const counted = await countedRunsOf(db, input.tenantId, input.passId, cluster);
  const target =
    cluster.decision === 'update' && cluster.targetProcedureId
      ? await findProcedureById(db, input.tenantId, cluster.targetProcedureId)
      : undefined;
  const learnedFrom = target ? await listCountedRuns(db, input.tenantId, target.id) : [];
  const runs = await loadEvidenceRuns(
    db,
    input.tenantId,
    // The failed attempts too: their failing steps are the body's edge cases.
    [...cluster.runIds, ...counted.map((run) => run.runId), ...learnedFrom.map((run) => run.runId)],
    [...cluster.successfulRunIds, ...learnedFrom.filter((run) => run.success).map((run) => run.runId)],
  );
  const evidence = buildClusterEvidence(runs, input.minSteps);
  // The figures the body states: the procedure's record once this cluster's runs are counted.
  const trackRecord = trackRecordAfter(target, target ? await freshRunsFor(db, input.tenantId, target, counted) : counted);
  let learned;
  try {
    learned = await distiller.distill(evidence, { trackRecord, ...(signal ? { signal } : {}) });
  } catch (error) {
    if (error instanceof DistillOutputMalformed) {
      const reason = `malformed ${distiller.kind} output: ${error.message}`;
      await markClusterSkipped(db, input.tenantId, input.passId, input.clusterKey, reason);
      return { status: 'skipped', reason };
    }
    // The procedure cannot be a valid skill as it is (its four fields do not fit the metadata
    // block, more tools than a skill may list): skipped and counted, naming the validator's rule.
    if (error instanceof SkillValidationError) {
      const reason = `refused by the validator (${error.rule}): ${error.code}: ${error.message}`;
      await markClusterSkipped(db, input.tenantId, input.passId, input.clusterKey, reason);
      return { status: 'skipped', reason };
    }
    throw error;
  }
  if (learned.kind === 'skip') {
    const reason = `${distiller.kind} distiller answered SKIP`;
    await markClusterSkipped(db, input.tenantId, input.passId, input.clusterKey, reason);
    return { status: 'skipped', reason };
  }
  await markClusterDistilled(db, input.tenantId, input.passId, input.clusterKey, {
    document: learned.document,
    toolSequence: evidence.consensusSequence,
  });
  return { status: 'distilled', name: learned.manifest.name };
}
