import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import { startTemporalDevServer } from '../infra/temporal-dev-server.ts';
import { PASS_SEARCH_ATTRIBUTE_TYPES } from '../client/pass-search-attributes.ts';
import { readStackFile, stackFilePath } from '../stack-file.ts';
import { createPool } from '../store/database.ts';
import { migrate } from '../store/migrations.ts';
import type { RunningWorker } from '../app/runtime.ts';
import type { CliContext } from './context.ts';

export interface LocalStack {
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  databaseUrl: string;
  embeddedDatabase: boolean;
  worker: RunningWorker;
  /** Stops everything this process started, in reverse order. */
  stop(): Promise<void>;
}

/**
 * The embedded stack in this process: a Temporal dev server with its Web UI (unless
 * TEMPORAL_ADDRESS names one), an embedded Postgres under the skillsmith home (unless
 * DATABASE_URL names one), the schema, and a worker built with `config`.
 */
export async function startLocalStack(context: CliContext, config: Config = context.config): Promise<LocalStack> {
  const existing = await readStackFile(config.home);
  if (existing) throw new Error(`a stack is already running (pid ${existing.pid}, ${stackFilePath(config.home)}): stop it first`);
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const step of stops.reverse()) {
      await step().catch((error: Error) => context.logger.error({ err: error }, 'stopping the stack failed'));
    }
  };
  try {
    let temporalAddress = config.temporal.address;
    let temporalUiUrl: string | undefined;
    if (!temporalAddress) {
      const server = await startTemporalDevServer({
        home: config.home,
        cliPath: config.temporal.cliPath,
        port: config.temporal.port,
        uiPort: config.temporal.uiPort,
        dbFile: resolve(config.home, 'temporal.db'),
        namespace: config.temporal.namespace,
        searchAttributes: PASS_SEARCH_ATTRIBUTE_TYPES,
        onProgress: (message) => context.logger.info(message),
      });
      stops.push(server.stop);
      temporalAddress = server.address;
      temporalUiUrl = server.uiUrl;
      context.logger.info({ address: server.address, origin: server.origin }, 'temporal dev server is up');
    }
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const embedded = await startEmbeddedPostgres({ dataDir: resolve(config.home, 'pgdata'), port: config.postgresPort });
      stops.push(embedded.stop);
      databaseUrl = embedded.url;
    }
    const pool = createPool(databaseUrl);
    await migrate(pool).finally(() => pool.end());
    const worker = await context.runtime.startWorker({ temporalAddress, databaseUrl, config });
    stops.push(worker.shutdown);
    return { temporalAddress, temporalUiUrl, databaseUrl, embeddedDatabase: !config.databaseUrl, worker, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
