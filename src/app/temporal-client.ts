import type { Client } from '@temporalio/client';
import { TemporalUnavailable } from '../client/temporal-unavailable.ts';
import type { Config } from './config.ts';
import { temporalConnectFailure, temporalConnectionOptions } from './temporal-environment.ts';

/** Connects once, on first use; a failure is not remembered, so a fixed cause heals without a restart. */
export function lazily<T>(load: () => Promise<T>): () => Promise<T> {
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
 * One Temporal client per process for what the API needs of Temporal (the run intake, the
 * readiness check), connected on first use, so the API starts — and answers /healthz — without it.
 */
export function createLazyTemporalClient(config: Config, temporalAddress: string | undefined): () => Promise<Client> {
  return lazily<Client>(async () => {
    const address = temporalAddress ?? config.temporal.address;
    if (!address) throw new TemporalUnavailable('no Temporal: set TEMPORAL_ADDRESS, or run the API inside `skillsmith up`');
    // Loaded here, not above: a CLI command's services need Temporal's SDK (~0.35 s of CPU to import) only when they reach it.
    const { Client, Connection } = await import('@temporalio/client');
    try {
      const connection = await Connection.connect({ ...temporalConnectionOptions(config.temporal, address), connectTimeout: 5_000 });
      return new Client({ connection, namespace: config.temporal.namespace });
    } catch (error) {
      throw await temporalConnectFailure(config.temporal, address, error);
    }
  });
}
