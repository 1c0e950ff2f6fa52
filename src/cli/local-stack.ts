import { resolve } from 'node:path';
import type { RunningApi } from '../api/server.ts';
import type { Config } from '../app/config.ts';
import { startEmbeddedPostgres } from '../infra/embedded-postgres.ts';
import { PASS_SEARCH_ATTRIBUTE_TYPES } from '../contracts/search-attributes.ts';
import { NativePostgresUnavailable, startNativePostgres } from '../infra/native-postgres.ts';
import { freePort, startTemporalDevServer } from '../infra/temporal-dev-server.ts';
import { superviseServer, type SupervisedServer } from '../infra/server-supervisor.ts';
import {
  readStackFile,
  removeLocalSecret,
  removeStackFile,
  stackFilePath,
  writeLocalSecret,
  writeStackFile,
  type StackFile,
} from './stack-file.ts';
import { createLocalSecret } from '../api/local-token.ts';
import { createPool } from '../store/database.ts';
import { migrate } from '../store/migrations.ts';
import type { RunningWorker } from '../app/runtime.ts';
import type { CliContext } from './context.ts';

export type StackDatabase = NonNullable<StackFile['database']>;

export interface LocalStack {
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  databaseUrl: string;
  embeddedDatabase: boolean;
  database: StackDatabase;
  worker: RunningWorker;
  /** Stops everything this process started, in reverse order, each step within its bound. */
  stop(): Promise<void>;
}

/** The shares of the 30 s shutdown bound (shutdown.ts): the API, the worker; the database and Temporal bound their own stops. */
const WORKER_DRAIN_MS = 8_000;
const API_CLOSE_MS = 3_000;

/** Waits for `step` at most `ms`; a step that overruns is logged and left behind, so shutdown goes on. */
export async function withinBound(
  step: () => Promise<void>,
  ms: number,
  what: string,
  onOverrun: (message: string) => void,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<'overrun'>((done) => {
    timer = setTimeout(() => done('overrun'), ms);
  });
  const outcome = await Promise.race([step().then(() => 'done' as const), overrun]).finally(() => clearTimeout(timer));
  if (outcome === 'overrun') onOverrun(`${what} did not finish within ${ms / 1000} s: going on without it`);
}

/**
 * The stack's own database when DATABASE_URL is unset: a native PostgreSQL + pgvector under the
 * home (default where a wheel is pinned), else — or with SKILLSMITH_EMBEDDED_DATABASE=pglite —
 * PGlite, which serves one connection at a time.
 */
async function startOwnDatabase(
  context: CliContext,
  config: Config,
): Promise<{ url: string; kind: StackDatabase; stop(): Promise<void>; server?: SupervisedServer }> {
  const { logger } = context;
  if (config.embeddedDatabase !== 'pglite') {
    try {
      const port = config.postgresPort || (await freePort());
      const native = await startNativePostgres({ home: config.home, port, onProgress: (message) => logger.info(message) });
      return { url: native.url, kind: 'native', stop: native.stop, server: { name: 'PostgreSQL', ...native } };
    } catch (error) {
      if (config.embeddedDatabase === 'native' || !(error instanceof NativePostgresUnavailable)) throw error;
      logger.warn(
        `${error.message}; falling back to the embedded PGlite, which serves one connection at a time (SKILLSMITH_EMBEDDED_DATABASE=pglite silences this)`,
      );
    }
  }
  const embedded = await startEmbeddedPostgres({ dataDir: resolve(config.home, 'pgdata'), port: config.postgresPort });
  return { url: embedded.url, kind: 'pglite', stop: embedded.stop };
}

/**
 * The embedded stack in this process: a Temporal dev server with its Web UI (unless
 * TEMPORAL_ADDRESS names one), a database under the skillsmith home (unless DATABASE_URL names
 * one), the schema, and a worker built with `config`.
 */
export async function startLocalStack(context: CliContext, config: Config = context.config): Promise<LocalStack> {
  const existing = await readStackFile(config.home);
  if (existing)
    throw new Error(`a stack is already running (pid ${existing.pid}, ${stackFilePath(config.home)}): stop it first (\`skillsmith down\`)`);
  const warn = (message: string) => context.logger.warn(message);
  const { logger } = context;
  /** Restarts a server this stack started when it dies, logged (its stop goes before the server's). */
  const supervise = (server: SupervisedServer) =>
    superviseServer(server, {
      down: (name) => logger.error(`${name} is down: restarting it`),
      restarted: (name, downForMs, attempts) =>
        logger.warn({ downForMs, attempts }, `${name} restarted after ${(downForMs / 1000).toFixed(1)} s down`),
      restartFailed: (name, error, attempt, retryInMs) =>
        logger.error(
          { err: error, attempt, retryInMs },
          `restarting ${name} failed (attempt ${attempt}); trying again in ${retryInMs / 1000} s`,
        ),
    });
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
      }).catch((error: Error) => {
        if (!error.message.includes('already in use')) throw error;
        throw new Error(
          `${error.message} — SKILLSMITH_TEMPORAL_PORT=${config.temporal.port} and SKILLSMITH_TEMPORAL_UI_PORT=${config.temporal.uiPort} ` +
            'must be free: stop what holds them (another `skillsmith up` or demo: `skillsmith down`), or set other ports',
        );
      });
      stops.push(server.stop);
      stops.push(supervise({ name: 'the Temporal dev server', ...server }).stop);
      temporalAddress = server.address;
      temporalUiUrl = server.uiUrl;
      context.logger.info({ address: server.address, origin: server.origin }, 'temporal dev server is up');
    }
    let databaseUrl = config.databaseUrl;
    let database: StackDatabase = 'external';
    if (!databaseUrl) {
      const own = await startOwnDatabase(context, config);
      stops.push(own.stop);
      if (own.server) stops.push(supervise(own.server).stop);
      databaseUrl = own.url;
      database = own.kind;
    }
    const pool = createPool(databaseUrl);
    await migrate(pool).finally(() => pool.end());
    const worker = await context.runtime.startWorker({ temporalAddress, databaseUrl, config });
    stops.push(() => withinBound(worker.shutdown, WORKER_DRAIN_MS, 'the worker drain', warn));
    return { temporalAddress, temporalUiUrl, databaseUrl, embeddedDatabase: !config.databaseUrl, database, worker, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface ServedStack {
  record: StackFile;
  /** Until SIGINT/SIGTERM (or the worker stops); then the API closes and the stack file goes. */
  untilStopped(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What makes a started stack the one other commands reach: the HTTP API over the stack's
 * database (with `config`, so the API recalls with the model the stack's worker uses) and the
 * stack file. `up` and `demo --keep-running` both serve their stack this way.
 */
export async function serveStack(context: CliContext, stack: LocalStack, config: Config = context.config): Promise<ServedStack> {
  const [{ startApiServer }, { createServices }] = await Promise.all([import('../api/server.ts'), import('../app/services.ts')]);
  const apiPool = createPool(stack.databaseUrl);
  // The CLI on this machine reaches the API with local tokens (recall without loading a model).
  const localSecret = createLocalSecret();
  await writeLocalSecret(config.home, localSecret);
  let api: RunningApi | undefined;
  try {
    api = await startApiServer({
      ...createServices(config, apiPool, { logger: context.logger, temporalAddress: stack.temporalAddress }),
      localSecret,
    });
  } catch (error) {
    await apiPool.end();
    await removeLocalSecret(config.home);
    const port = (error as { code?: string }).code === 'EADDRINUSE' ? ` (SKILLSMITH_API_PORT=${config.api.port} is taken)` : '';
    throw new Error(`the HTTP API could not start${port}: ${(error as Error).message}`, { cause: error });
  }
  const running = api;
  const record: StackFile = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    temporalAddress: stack.temporalAddress,
    temporalUiUrl: stack.temporalUiUrl ?? null,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    databaseUrl: stack.databaseUrl,
    embeddedDatabase: stack.embeddedDatabase,
    database: stack.database,
    apiUrl: running.url,
  };
  await writeStackFile(config.home, record);
  return {
    record,
    untilStopped: () =>
      new Promise<void>((done) => {
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
        void stack.worker.done.then(done);
      }),
    async close() {
      await removeStackFile(config.home);
      await removeLocalSecret(config.home);
      await withinBound(running.close, API_CLOSE_MS, 'closing the HTTP API', (message) => context.logger.warn(message));
      await apiPool.end();
    },
  };
}
