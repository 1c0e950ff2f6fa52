import { findCountedRuns } from '../procedures/procedure-repository.ts';
import type { CountedRun, Procedure } from '../procedures/procedure.ts';
import { findUnsuccessfulRunIds } from '../runs/run-repository.ts';
import type { Queryable } from '../store/database.ts';
import { findFailedAttempts } from './failed-attempts.ts';
import type { PassCluster } from './pass-cluster.ts';
import type { TrackRecord } from './reconcile.ts';

/**
 * A cluster's track record: the runs its qualification counted and the failed attempts of its procedure, and what a procedure's record
 * becomes once the cluster is installed into it. Reconcile decides with it, distillation writes
 * the figures into the skill, install counts the same runs.
 */

/**
 * The runs the cluster's track record counts: its successful sequences, its failed or cancelled
 * runs, and the failed runs of the pass that attempted its procedure though clustering put them
 * apart (`findFailedAttempts`).
 */
export async function countedRunsOf(db: Queryable, tenantId: string, passId: string, cluster: PassCluster): Promise<CountedRun[]> {
  const failed = await findUnsuccessfulRunIds(db, tenantId, cluster.runIds);
  const attempted = await findFailedAttempts(db, tenantId, passId, cluster);
  return [
    ...cluster.successfulRunIds.map((runId) => ({ runId, success: true })),
    ...[...failed, ...attempted].map((runId) => ({ runId, success: false })),
  ];
}

/** The counted runs `target` has not counted yet (each run counts once, however many passes see it). */
export async function freshRunsFor(db: Queryable, tenantId: string, target: Procedure, counted: CountedRun[]): Promise<CountedRun[]> {
  const known = await findCountedRuns(
    db,
    tenantId,
    target.id,
    counted.map((run) => run.runId),
  );
  return counted.filter((run) => !known.has(run.runId));
}

/** The record a skill will read once this cluster is installed: the target's plus the runs it had not counted, or the cluster's own. */
export function trackRecordAfter(target: Procedure | undefined, fresh: CountedRun[]): TrackRecord {
  const successes = fresh.filter((run) => run.success).length;
  return { successCount: (target?.successCount ?? 0) + successes, attemptCount: (target?.attemptCount ?? 0) + fresh.length };
}
