import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { intakeWorkflowId, RUNS_STORED_SIGNAL } from '../contracts/intake-contract.ts';
import { admitRunReport, signalIntake } from '../client/run-intake-client.ts';
import { TemporalUnavailable } from '../client/temporal-unavailable.ts';
import type { Config } from './config.ts';
import type { Logger } from '../logging/logger.ts';
import { createProcedurePresence } from '../procedures/procedure-presence.ts';
import { mayWantReview } from '../review/review-eligibility.ts';
import type { RunReport } from '../runs/run-report.ts';
import { createGroupedRunWriter } from '../runs/grouped-run-writer.ts';
import { createCoalescedIntakeSignal } from './coalesced-intake-signal.ts';
import { createLazyTemporalClient } from './temporal-client.ts';

/**
 * Whether an accepted run was handed to its tenant's intake for review (`scheduled`: the intake
 * decides it as always, and reviews it at most once) or no review can want it (`none`: stored,
 * nothing sent).
 */
export type RunReviewPlan = 'scheduled' | 'none';

/** Takes a run report in: validates it, refuses oversized ones, stores it, then tells the intake when a review may want it. */
export type ReportRunFunction = (report: unknown) => Promise<{ workflowId: string; report: RunReport; review: RunReviewPlan }>;

export interface RunIntakeDependencies {
  config: Config;
  pool: pg.Pool;
  logger: Logger;
  /** TEMPORAL_ADDRESS or the running stack's; config's when not given. */
  temporalAddress: string | undefined;
  /** A client shared with the rest of the process; one of its own (on `temporalAddress`) when not given. */
  temporal?: () => Promise<Client>;
  /** How long the door believes whether a tenant has procedures (PROCEDURE_PRESENCE_TTL_MS when not given; tests lengthen it). */
  procedurePresenceTtlMs?: number;
}

/**
 * The run intake behind `POST /v1/runs`, store first: the report is written (idempotent on
 * tenant + runId; other content under a stored runId is a RunConflict; reports arriving together
 * share a transaction) before anything is answered, and only then, when a review may want the run,
 * is an intake workflow of its tenant signalled with the run's id — a few bytes, whatever the
 * report's size — to decide and start its review (runs of a tenant stored while a signal for it is
 * in flight share the next signal). So an accepted run is durable before the 202, and no report can
 * make the workflow's history or activity input too large. A run no review can want (no tool call,
 * or nothing to review it for: `mayWantReview`) costs no Temporal round trip at all; its answer
 * names the agent's own intake (`workflowId`, deterministic; nothing started) with `review: 'none'`;
 * a scheduled run's answer names the intake that was signalled.
 * When the signal fails the run stays stored, the failure is logged and answered (503): the
 * sender reports again, which changes nothing stored and signals again.
 * The Temporal connection opens on first use, so whatever holds it starts without Temporal.
 */
export function createRunIntake({
  config,
  pool,
  logger,
  temporalAddress,
  temporal: shared,
  procedurePresenceTtlMs,
}: RunIntakeDependencies): ReportRunFunction {
  const temporal = shared ?? createLazyTemporalClient(config, temporalAddress);
  const storeRun = createGroupedRunWriter(pool);
  const procedures = createProcedurePresence(pool, procedurePresenceTtlMs === undefined ? {} : { ttlMs: procedurePresenceTtlMs });
  const signalStored = createCoalescedIntakeSignal(async (intake, runIds) =>
    signalIntake(await temporal(), intake, { name: RUNS_STORED_SIGNAL, arg: { runIds } }, { taskQueue: config.temporal.taskQueue }),
  );
  return async (report) => {
    const valid = admitRunReport(report);
    await storeRun(valid);
    const { tenantId, agentId, runId } = valid;
    const reviewable = await mayWantReview(
      { status: valid.status, toolCallCount: valid.toolCalls.length, skillPinCount: valid.skillPins.length },
      { llmReviewEnabled: config.authoring.reviewEnabled },
      // Unknown (the query failed) counts as present: the intake then decides, as it always did.
      () => procedures.has(tenantId).catch(() => true),
    );
    if (!reviewable) return { workflowId: intakeWorkflowId(tenantId, agentId), report: valid, review: 'none' };
    try {
      const workflowId = await signalStored({ tenantId, agentId, runId });
      return { workflowId, report: valid, review: 'scheduled' };
    } catch (error) {
      logger.error(
        { err: error, tenantId, agentId, runId },
        'run stored, but signalling its intake failed: it is reviewed once reported again',
      );
      if (error instanceof TemporalUnavailable) throw error;
      throw new TemporalUnavailable(
        `run ${runId} is stored, but its intake could not be signalled (report it again): ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  };
}
