import type { Connection } from '@temporalio/client';
import { Command, CommanderError, Option } from 'commander';
import type pg from 'pg';
import { z } from 'zod';
import type { Runtime, RuntimeFactory } from '../app/runtime.ts';
import type { Services } from '../app/services.ts';
import { TemporalUnavailable } from '../client/temporal-unavailable.ts';
import { loadConfig, type Config } from '../app/config.ts';
import { useEmbeddingRuntime } from '../embedding/embedding-runtime.ts';
import { temporalConnectFailure, temporalConnectionOptions } from '../app/temporal-environment.ts';
import { createLogger, type Logger } from '../logging/logger.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { failureCause } from '../contracts/failure-cause.ts';
import { databaseFailure } from '../store/database-failure.ts';
import { readStackFile } from './stack-file.ts';
import { tenantIdSchema } from '../input/tenant-id.ts';
import { consoleOutput, type CliContext } from './context.ts';
import { examplesHelp } from './help-examples.ts';
import { registerClustersCommands } from './commands/clusters.ts';
import { registerDemoCommands } from './commands/demo.ts';
import { registerEvalCommands } from './commands/eval.ts';
import { registerIngestCommands } from './commands/ingest.ts';
import { registerApprovalsCommands } from './commands/approvals.ts';
import { registerMigrateCommands } from './commands/migrate.ts';
import { registerModelsCommands } from './commands/models.ts';
import { registerMetricsCommands } from './commands/metrics.ts';
import { registerRecallCommands } from './commands/recall.ts';
import { registerRolloutCommands } from './commands/rollout.ts';
import { registerSkillsCommands } from './commands/skills.ts';
import { registerApiCommands } from './commands/api.ts';
import { registerAgentsCommands } from './commands/agents.ts';
import { registerStackCommands } from './commands/stack.ts';
import { registerSynthesisCommands } from './commands/synthesis.ts';

export class NoDatabase extends SkillsmithError {
  static override readonly code = 'NoDatabase';
}

/** What a command opened, closed when it ends. */
interface Resources {
  pools: pg.Pool[];
  connections: Connection[];
}

function createContext(config: Config, logger: Logger, runtime: Runtime, resources: Resources): CliContext {
  const databaseUrl = async () => {
    if (config.databaseUrl) return config.databaseUrl;
    const stack = await readStackFile(config.home);
    if (stack) return stack.databaseUrl;
    throw new NoDatabase('no database: set DATABASE_URL, or start the embedded stack with `skillsmith up`');
  };
  const temporalAddress = async () => {
    if (config.temporal.address) return config.temporal.address;
    const stack = await readStackFile(config.home);
    if (stack) return stack.temporalAddress;
    throw new TemporalUnavailable('no Temporal: set TEMPORAL_ADDRESS, or start the embedded stack with `skillsmith up`');
  };
  // Postgres, Temporal's client and the services load when a command first needs them, so
  // `--help` and the commands that need none start fast (bench/cli-startup.bench.ts).
  const openPool = async () => {
    const [{ createPool }, { migrate }] = await Promise.all([import('../store/database.ts'), import('../store/migrations.ts')]);
    const pool = createPool(await databaseUrl());
    resources.pools.push(pool);
    await migrate(pool);
    return pool;
  };
  let services: Promise<Services> | undefined;
  return {
    config,
    logger,
    output: consoleOutput,
    runtime,
    databaseUrl,
    openPool,
    services() {
      services ??= openPool().then(async (pool) => {
        const { createServices } = await import('../app/services.ts');
        // POST /v1/runs (`skillsmith api`) reaches TEMPORAL_ADDRESS or the running stack's; else it answers 503.
        return createServices(config, pool, { logger, temporalAddress: await temporalAddress().catch(() => undefined) });
      });
      return services;
    },
    temporalAddress,
    async temporalClient() {
      const address = await temporalAddress();
      const { Client, Connection } = await import('@temporalio/client');
      let connection: Connection;
      try {
        connection = await Connection.connect({ ...temporalConnectionOptions(config.temporal, address), connectTimeout: 5_000 });
      } catch (error) {
        throw await temporalConnectFailure(config.temporal, address, error);
      }
      resources.connections.push(connection);
      return new Client({ connection, namespace: config.temporal.namespace });
    },
    async temporalUiUrl() {
      if (config.temporal.address) return undefined;
      return (await readStackFile(config.home))?.temporalUiUrl ?? undefined;
    },
  };
}

export function buildProgram(context: CliContext): Command {
  const program = new Command('skillsmith')
    .description('Distils recurring successful agent tool-call sequences into versioned, governed skills.')
    // Not commander's .version(): its global --version would take `agents show --version N` too (runCli answers it).
    .addHelpText('after', '\n  -V, --version  print the version (alone: `skillsmith --version`)')
    .addOption(new Option('--tenant <tenant>', 'tenant id').default('default'))
    .option('--json', 'machine-readable output on stdout', false)
    .option('--quiet', 'no progress on stderr', false)
    .configureHelp({ showGlobalOptions: true })
    // runCli reports usage errors itself, in the same shape as every other error (JSON under --json).
    .configureOutput({ outputError: () => undefined })
    .addHelpText('afterAll', ({ command }) => (command.parent && !command.commands.length ? examplesHelp(command) : ''))
    .showHelpAfterError(false)
    .exitOverride()
    .hook('preAction', (_command, action) => {
      const { tenant } = action.optsWithGlobals<{ tenant: string }>();
      const parsed = tenantIdSchema.safeParse(tenant);
      if (!parsed.success) throw new Error(`invalid --tenant ${JSON.stringify(tenant)}: ${parsed.error.issues[0]?.message}`);
    });
  registerStackCommands(program, context);
  registerDemoCommands(program, context);
  registerEvalCommands(program, context);
  registerApiCommands(program, context);
  registerMigrateCommands(program, context);
  registerIngestCommands(program, context);
  registerSynthesisCommands(program, context);
  registerRecallCommands(program, context);
  registerClustersCommands(program, context);
  registerSkillsCommands(program, context);
  registerAgentsCommands(program, context);
  registerApprovalsCommands(program, context);
  registerMetricsCommands(program, context);
  registerRolloutCommands(program, context);
  registerModelsCommands(program, context);
  return program;
}

/** Parses argv, runs the command, and turns any error into a one-line reason and a non-zero exit. */
export async function runCli(argv: string[], createRuntime: RuntimeFactory, version: string): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const json = argv.includes('--json');
  const resources: Resources = { pools: [], connections: [] };
  try {
    const config = loadConfig();
    useEmbeddingRuntime(config.embeddingRuntimeDir);
    const logger = createLogger(config.logLevel);
    const context = createContext(config, logger, createRuntime(config, logger), resources);
    const program = buildProgram(context);
    await program.parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (error) {
    // Help and version are "errors" to commander; they already printed.
    if (error instanceof CommanderError && error.exitCode === 0) return 0;
    if (error instanceof CommanderError) {
      const message = error.message.replace(/^error: /, '');
      if (json) process.stdout.write(`${JSON.stringify({ error: { code: 'InvalidUsage', message } })}\n`);
      process.stderr.write(`skillsmith: ${message} (see skillsmith --help)\n`);
      return error.exitCode;
    }
    // A failed workflow's own message says nothing: report its root cause; the database's trouble as the API names it.
    const cause =
      error instanceof z.ZodError
        ? {
            type: 'InvalidInput',
            message: error.issues.map((issue) => `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`).join('; '),
          }
        : failureCause(databaseFailure(error) ?? error);
    const code = cause.type;
    const message = cause.message.split('\n')[0];
    // A refused skill package lists every rule it broke (the API's details.violations).
    const violations = (error as { violations?: Array<{ message: string }> } | null)?.violations;
    const details = Array.isArray(violations) ? { details: { violations } } : {};
    if (json) process.stdout.write(`${JSON.stringify({ error: { code, message, ...details } })}\n`);
    if (Array.isArray(violations) && violations.length > 1) {
      process.stderr.write(
        `skillsmith: ${violations.length} problems:\n${violations.map((violation) => `  - ${violation.message}\n`).join('')}`,
      );
    } else process.stderr.write(`skillsmith: ${message}\n`);
    return 1;
  } finally {
    await Promise.all([
      ...resources.pools.map((pool) => pool.end().catch(() => undefined)),
      ...resources.connections.map((connection) => connection.close().catch(() => undefined)),
    ]);
  }
}
