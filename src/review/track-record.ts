import type pg from 'pg';
import type { ClusteringSettings } from '../clustering/clustering-settings.ts';
import type { Logger } from '../logging/logger.ts';
import type { TrackRecordUpdate } from '../contracts/review-contract.ts';
import {
  addObservedCounts,
  findProceduresByName,
  hasProcedures,
  insertObservations,
  lockProcedures,
  setProcedureEnabled,
  type ObservedCounts,
} from '../procedures/procedure-repository.ts';
import type { Procedure } from '../procedures/procedure.ts';
import type { RecallFunction, RecalledSkill } from '../recall/recall.ts';
import type { RunReport } from '../runs/run-report.ts';
import { withTransaction } from '../store/database.ts';
import { recordSkillEvent } from '../store/skill-event-repository.ts';

/**
 * The empirical record of the procedures a finished run used — the skills it had pinned and
 * those recall returns for its goal: attempt +1, success +1 when the run completed. A procedure
 * whose observed success rate falls below minSuccessRate over at least minOccurrences attempts
 * is disabled (logged, and reversible with `skillsmith procedures enable`), so a once-good
 * policy that starts failing stops being recalled.
 */

export interface TrackRecordDependencies {
  pool: pg.Pool;
  /** recall_skill at the configured τ (its embedder loads only when a run is recalled for). */
  recall: RecallFunction;
  /** recall_skill for several goals at once (embedded together); when absent, each goal is recalled alone. */
  recallMany?: (tenantId: string, goals: string[]) => Promise<RecalledSkill[][]>;
  synthesis: Pick<ClusteringSettings, 'minOccurrences' | 'minSuccessRate'>;
  logger: Logger;
}

export function shouldDisable(procedure: Procedure, thresholds: Pick<ClusteringSettings, 'minOccurrences' | 'minSuccessRate'>): boolean {
  return (
    procedure.enabled &&
    procedure.observedAttempts >= thresholds.minOccurrences &&
    procedure.observedSuccesses / procedure.observedAttempts < thresholds.minSuccessRate
  );
}

/** What the track record reads of a run: its outcome, its goal (recalled for) and its pins. */
export type TrackedRun = Pick<RunReport, 'runId' | 'goal' | 'status' | 'skillPins'>;

export async function updateTrackRecord(
  dependencies: TrackRecordDependencies,
  tenantId: string,
  run: TrackedRun,
): Promise<TrackRecordUpdate> {
  return (await updateTrackRecords(dependencies, tenantId, [run]))[0]!;
}

/**
 * The track record of several runs of a tenant (a review batch), in run order: each distinct goal
 * is recalled once, the procedures are read once, and the observations are written in one
 * transaction — idempotent per (run, procedure), so a retried batch counts no run twice.
 */
export async function updateTrackRecords(
  dependencies: TrackRecordDependencies,
  tenantId: string,
  runs: readonly TrackedRun[],
): Promise<TrackRecordUpdate[]> {
  const { pool, synthesis, logger } = dependencies;
  const recalledByGoal = new Map<string, string[]>();
  if (await hasProcedures(pool, tenantId)) {
    const goals = [...new Set(runs.map((run) => run.goal))];
    const recalled = dependencies.recallMany
      ? await dependencies.recallMany(tenantId, goals)
      : await Promise.all(goals.map((goal) => dependencies.recall(tenantId, { goal })));
    goals.forEach((goal, index) =>
      recalledByGoal.set(
        goal,
        recalled[index]!.map((match) => match.name),
      ),
    );
  }
  const names = new Set(runs.flatMap((run) => [...run.skillPins.map((pin) => pin.name), ...(recalledByGoal.get(run.goal) ?? [])]));
  const byName = new Map((await findProceduresByName(pool, tenantId, [...names])).map((procedure) => [procedure.name, procedure]));
  const usedByRun = runs.map((run) => {
    const used = new Map<string, { procedure: Procedure; via: 'pinned' | 'recalled' }>();
    for (const pin of run.skillPins) {
      const procedure = byName.get(pin.name);
      if (procedure) used.set(procedure.id, { procedure, via: 'pinned' });
    }
    for (const name of recalledByGoal.get(run.goal) ?? []) {
      const procedure = byName.get(name);
      if (procedure && !used.has(procedure.id)) used.set(procedure.id, { procedure, via: 'recalled' });
    }
    return used;
  });
  const updates = runs.map((): TrackRecordUpdate => ({ observed: [], disabled: [] }));
  if (usedByRun.every((used) => used.size === 0)) return updates;
  await withTransaction(pool, async (client) => {
    // Locked, then counted in run order as one observation at a time would: the same counts, the
    // same disabling point, in four statements per batch rather than three per observation.
    const locked = await lockProcedures(client, tenantId, [...new Set(usedByRun.flatMap((used) => [...used.keys()]))]);
    const observations = runs.flatMap((run, index) =>
      [...usedByRun[index]!.values()].map(({ procedure, via }) => ({
        runId: run.runId,
        procedureId: procedure.id,
        success: run.status === 'completed',
        via,
      })),
    );
    const recorded = new Map(
      (await insertObservations(client, tenantId, observations)).map((row) => [`${row.runId}\u0000${row.procedureId}`, row.learned]),
    );
    const current = new Map(locked.map((procedure) => [procedure.id, { ...procedure }]));
    const counts = new Map<string, ObservedCounts>();
    for (const [index, run] of runs.entries()) {
      const update = updates[index]!;
      const success = run.status === 'completed';
      for (const { procedure, via } of usedByRun[index]!.values()) {
        const key = `${run.runId}\u0000${procedure.id}`;
        const learned = recorded.get(key);
        recorded.delete(key); // a run listed twice is counted once, as the idempotent insert would
        const observed = current.get(procedure.id);
        if (learned === undefined || !observed) continue;
        // A run the procedure was learned from is already in its record: only the observed window counts it.
        const counted = learned ? 0 : 1;
        const successes = success ? 1 : 0;
        const count = counts.get(procedure.id) ?? {
          procedureId: procedure.id,
          attempts: 0,
          successes: 0,
          observedAttempts: 0,
          observedSuccesses: 0,
        };
        counts.set(procedure.id, {
          ...count,
          attempts: count.attempts + counted,
          successes: count.successes + successes * counted,
          observedAttempts: count.observedAttempts + 1,
          observedSuccesses: count.observedSuccesses + successes,
        });
        Object.assign(observed, {
          attemptCount: observed.attemptCount + counted,
          successCount: observed.successCount + successes * counted,
          observedAttempts: observed.observedAttempts + 1,
          observedSuccesses: observed.observedSuccesses + successes,
        });
        update.observed.push({ name: observed.name, via });
        if (!shouldDisable(observed, synthesis)) continue;
        observed.enabled = false;
        await setProcedureEnabled(client, tenantId, observed.name, false);
        const rate = `${observed.observedSuccesses}/${observed.observedAttempts}`;
        await recordSkillEvent(client, tenantId, {
          kind: 'procedure.disabled',
          runId: run.runId,
          name: observed.name,
          revision: observed.revision,
          reason: 'success_rate',
          detail: {
            observedSuccesses: observed.observedSuccesses,
            observedAttempts: observed.observedAttempts,
            minSuccessRate: synthesis.minSuccessRate,
          },
        });
        logger.warn(
          { tenantId, procedure: observed.name, observed: rate, minSuccessRate: synthesis.minSuccessRate },
          `procedure ${observed.name} disabled: ${rate} observed successes is below ${synthesis.minSuccessRate} (re-enable with \`skillsmith procedures enable ${observed.name}\`)`,
        );
        update.disabled.push(observed.name);
      }
    }
    await addObservedCounts(client, tenantId, [...counts.values()]);
  });
  return updates;
}
