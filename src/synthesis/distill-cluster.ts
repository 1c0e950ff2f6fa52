import type { Queryable } from '../store/database.ts';
import { findRun } from '../runs/run-repository.ts';
import { buildClusterEvidence, type EvidenceRun } from './cluster-evidence.ts';
import type { Distiller } from './distiller.ts';
import { DistillOutputMalformed } from './learned-skill.ts';
import { getPassCluster, markClusterDistilled, markClusterSkipped } from './pass-repository.ts';

/** At most this many runs of a cluster are shown to the distiller (sorted by id: deterministic). */
export const MAX_EVIDENCE_RUNS = 40;

export type DistillOutcome =
  | { status: 'distilled'; name: string }
  | { status: 'skipped'; reason: string };

/**
 * DISTILL for one cluster of a pass: builds the evidence from its runs, asks the distiller, and
 * records the candidate document or the reason the cluster is skipped. Errors reaching the
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
  const successful = new Set(cluster.successfulRunIds);
  // Successful runs first so the evidence always contains the sequences being distilled.
  const chosen = [...cluster.runIds]
    .sort((a, b) => Number(successful.has(b)) - Number(successful.has(a)) || (a < b ? -1 : 1))
    .slice(0, MAX_EVIDENCE_RUNS);
  const runs: EvidenceRun[] = [];
  for (const runId of chosen) {
    const run = await findRun(db, input.tenantId, runId);
    if (run) runs.push({ runId, goal: run.goal, status: run.status, toolCalls: run.toolCalls });
  }
  const evidence = buildClusterEvidence(runs, input.minSteps);
  let learned;
  try {
    learned = await distiller.distill(evidence, signal ? { signal } : {});
  } catch (error) {
    if (error instanceof DistillOutputMalformed) {
      const reason = `malformed ${distiller.kind} output: ${error.message}`;
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
