import type pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { findProceduresByName, hasProcedures, observeProcedure, setProcedureEnabled } from '../procedures/procedure-repository.ts';
import type { Procedure } from '../procedures/procedure.ts';
import type { RecallFunction } from '../recall/recall.ts';
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
  synthesis: Config['synthesis'];
  logger: Logger;
}

export interface TrackRecordUpdate {
  observed: Array<{ name: string; via: 'pinned' | 'recalled' }>;
  disabled: string[];
}

export function shouldDisable(procedure: Procedure, thresholds: Pick<Config['synthesis'], 'minOccurrences' | 'minSuccessRate'>): boolean {
  return (
    procedure.enabled &&
    procedure.observedAttempts >= thresholds.minOccurrences &&
    procedure.observedSuccesses / procedure.observedAttempts < thresholds.minSuccessRate
  );
}

export async function updateTrackRecord(
  dependencies: TrackRecordDependencies,
  tenantId: string,
  run: RunReport,
): Promise<TrackRecordUpdate> {
  const { pool, synthesis, logger } = dependencies;
  const used = new Map<string, { procedure: Procedure; via: 'pinned' | 'recalled' }>();
  for (const procedure of await findProceduresByName(
    pool,
    tenantId,
    run.skillPins.map((pin) => pin.name),
  )) {
    used.set(procedure.id, { procedure, via: 'pinned' });
  }
  if (await hasProcedures(pool, tenantId)) {
    const recalled = await dependencies.recall(tenantId, { goal: run.goal });
    for (const procedure of await findProceduresByName(
      pool,
      tenantId,
      recalled.map((match) => match.name),
    )) {
      if (!used.has(procedure.id)) used.set(procedure.id, { procedure, via: 'recalled' });
    }
  }
  const update: TrackRecordUpdate = { observed: [], disabled: [] };
  if (used.size === 0) return update;
  const success = run.status === 'completed';
  await withTransaction(pool, async (client) => {
    for (const { procedure, via } of used.values()) {
      const observed = await observeProcedure(client, tenantId, { runId: run.runId, procedureId: procedure.id, success, via });
      if (!observed) continue;
      update.observed.push({ name: observed.name, via });
      if (!shouldDisable(observed, synthesis)) continue;
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
  });
  return update;
}
