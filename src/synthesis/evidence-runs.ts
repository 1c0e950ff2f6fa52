import { findRun } from '../runs/run-repository.ts';
import type { Queryable } from '../store/database.ts';
import type { EvidenceRun } from './cluster-evidence.ts';

/** At most this many runs of a cluster are shown to the distiller (sorted by id: deterministic). */
export const MAX_EVIDENCE_RUNS = 40;

/** The runs a cluster's evidence is built from: successful ones first, so it always contains the sequences being distilled. */
export async function loadEvidenceRuns(
  db: Queryable,
  tenantId: string,
  runIds: string[],
  successfulRunIds: string[],
): Promise<EvidenceRun[]> {
  const successful = new Set(successfulRunIds);
  const chosen = [...new Set(runIds)]
    .sort((a, b) => Number(successful.has(b)) - Number(successful.has(a)) || (a < b ? -1 : 1))
    .slice(0, MAX_EVIDENCE_RUNS);
  const runs: EvidenceRun[] = [];
  for (const runId of chosen) {
    const run = await findRun(db, tenantId, runId);
    if (run) runs.push({ runId, goal: run.goal, status: run.status, toolCalls: run.toolCalls });
  }
  return runs;
}
