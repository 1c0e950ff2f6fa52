import type { ActivityDependencies } from './dependencies.ts';
import { beginPassRecord, finishPassRecord, lastCompletedPassStart, updatePassCounts } from '../src/synthesis/pass-repository.ts';
import { type PassCounts, type PassRecord, type PassStatus } from '../src/contracts/pass-record.ts';

export interface BeginPassInput {
  tenantId: string;
  passId: string;
  workflowRunId: string;
  full: boolean;
}

export interface BeginPassResult {
  /** The pass does not run: synthesis is disabled in configuration. */
  disabled: boolean;
  since: string | null;
  distiller: 'llm' | 'extractive';
}

/** The pass's record in Postgres: begun, counted, and ended with its outcome. */
export const createPassActivities = ({ pool, config, logger }: ActivityDependencies) => ({
  async beginPass(input: BeginPassInput): Promise<BeginPassResult> {
    const since = input.full ? null : await lastCompletedPassStart(pool, input.tenantId);
    await beginPassRecord(pool, {
      tenantId: input.tenantId,
      id: input.passId,
      workflowRunId: input.workflowRunId,
      full: input.full,
      since,
      distiller: config.synthesis.distiller,
    });
    if (!config.synthesis.enabled) {
      logger.info(
        { tenantId: input.tenantId, passId: input.passId },
        'synthesis is disabled (SKILLSMITH_SYNTHESIS_ENABLED=false): pass skipped',
      );
    }
    return { disabled: !config.synthesis.enabled, since: since?.toISOString() ?? null, distiller: config.synthesis.distiller };
  },

  async recordPassCounts(input: { tenantId: string; passId: string; counts: Partial<PassCounts> }): Promise<void> {
    await updatePassCounts(pool, input.tenantId, input.passId, input.counts);
  },

  async finishPass(input: {
    tenantId: string;
    passId: string;
    status: Exclude<PassStatus, 'running'>;
    outcome: string | null;
  }): Promise<PassRecord> {
    const record = await finishPassRecord(pool, input.tenantId, input.passId, input.status, input.outcome);
    const log = { tenantId: input.tenantId, passId: input.passId, status: record.status, outcome: record.outcome, counts: record.counts };
    if (record.status === 'failed' || record.outcome?.startsWith('skipped: llm'))
      logger.error(log, `synthesis pass ${record.status}: ${record.outcome}`);
    else logger.info(log, `synthesis pass ${record.status}`);
    return record;
  },
});
