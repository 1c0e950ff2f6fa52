import { Client, Connection } from '@temporalio/client';
import { reportRunCompleted } from '../client/run-intake-client.ts';
import { TemporalUnavailable } from '../client/temporal-unavailable.ts';
import type { Config } from '../config.ts';
import type { RunReport } from '../runs/run-report.ts';

/** Hands a run report to the intake (signalWithStart); validates it and refuses oversized ones. */
export type ReportRunFunction = (report: unknown) => Promise<{ workflowId: string; report: RunReport }>;

/** Connects once, on first use; a failure is not remembered, so a fixed cause heals without a restart. */
function lazily<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/**
 * The run intake over Temporal: the connection opens on first use, so whatever holds it starts
 * (and serves everything else) without Temporal; a report then fails with TemporalUnavailable.
 * `temporalAddress` is TEMPORAL_ADDRESS or the running stack's; config's when not given.
 */
export function createRunIntake(config: Config, temporalAddress: string | undefined): ReportRunFunction {
  const temporal = lazily<Client>(async () => {
    const address = temporalAddress ?? config.temporal.address;
    if (!address)
      throw new TemporalUnavailable('no Temporal for the run intake: set TEMPORAL_ADDRESS, or run the API inside `skillsmith up`');
    try {
      return new Client({ connection: await Connection.connect({ address, connectTimeout: 5_000 }), namespace: config.temporal.namespace });
    } catch (error) {
      throw new TemporalUnavailable(`Temporal at ${address} does not answer: ${(error as Error).message}`);
    }
  });
  return async (report) => reportRunCompleted(await temporal(), report, { taskQueue: config.temporal.taskQueue });
}
