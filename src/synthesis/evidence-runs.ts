import { createHash } from 'node:crypto';
import { findRun } from '../runs/run-repository.ts';
import type { Queryable } from '../store/database.ts';
import type { EvidenceRun } from './cluster-evidence.ts';

/**
 * At most this many successful and failed runs of a cluster are read for its evidence: a uniform
 * sample (ordered by a hash of the run id: deterministic, and unrelated to how ids were minted),
 * from which the evidence takes its consensus, parameters and a typical, stratified set of goals.
 */
export const MAX_SUCCESSFUL_EVIDENCE_RUNS = 200;
export const MAX_FAILED_EVIDENCE_RUNS = 100;

const spread = (runIds: string[], limit: number) =>
  runIds
    .map((runId) => ({ runId, key: createHash('sha256').update(runId).digest('hex') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, limit)
    .map(({ runId }) => runId);

/** The runs a cluster's evidence is built from: a uniform sample of its successful runs, and of its failed ones. */
export async function loadEvidenceRuns(
  db: Queryable,
  tenantId: string,
  runIds: string[],
  successfulRunIds: string[],
): Promise<EvidenceRun[]> {
  const successful = new Set(successfulRunIds);
  const chosen = [
    ...spread([...successful], MAX_SUCCESSFUL_EVIDENCE_RUNS),
    ...spread(
      [...new Set(runIds)].filter((runId) => !successful.has(runId)),
      MAX_FAILED_EVIDENCE_RUNS,
    ),
  ];
  const runs: EvidenceRun[] = [];
  for (const runId of chosen) {
    const run = await findRun(db, tenantId, runId);
    if (run) runs.push({ runId, goal: run.goal, status: run.status, toolCalls: run.toolCalls });
  }
  return runs;
}
