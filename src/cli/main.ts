import { Command, CommanderError, Option } from 'commander';
import type pg from 'pg';
import { z } from 'zod';
import { loadConfig, type Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import { readStackFile } from '../stack-file.ts';
import { createPool } from '../store/database.ts';
import { migrate } from '../store/migrations.ts';
import { consoleOutput, type CliContext, type Runtime } from './context.ts';
import { registerMigrateCommands } from './commands/migrate.ts';
import { registerStackCommands } from './commands/stack.ts';

export const tenantIdSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a tenant id is 1-63 of [a-z0-9_-], starting with a letter or digit');

export class NoDatabase extends Error {
  override readonly name = 'NoDatabase';
}

function createContext(config: Config, runtime: Runtime, pools: pg.Pool[]): CliContext {
  const logger = createLogger(config.logLevel);
  const databaseUrl = async () => {
    if (config.databaseUrl) return config.databaseUrl;
    const stack = await readStackFile(config.home);
    if (stack) return stack.databaseUrl;
    throw new NoDatabase('no database: set DATABASE_URL, or start the embedded stack with `skillsmith up`');
  };
  return {
    config,
    logger,
    output: consoleOutput,
    runtime,
    databaseUrl,
    async openPool() {
      const pool = createPool(await databaseUrl());
      pools.push(pool);
      await migrate(pool);
      return pool;
    },
  };
}

export function buildProgram(context: CliContext): Command {
  const program = new Command('skillsmith')
    .description('Distils recurring successful agent tool-call sequences into versioned, governed skills.')
    .addOption(new Option('--tenant <tenant>', 'tenant id').default('default'))
    .option('--json', 'machine-readable output on stdout', false)
    .showHelpAfterError(false)
    .exitOverride()
    .hook('preAction', (_command, action) => {
      const { tenant } = action.optsWithGlobals<{ tenant: string }>();
      const parsed = tenantIdSchema.safeParse(tenant);
      if (!parsed.success) throw new Error(`invalid --tenant ${JSON.stringify(tenant)}: ${parsed.error.issues[0]?.message}`);
    });
  registerStackCommands(program, context);
  registerMigrateCommands(program, context);
  return program;
}

/** Parses argv, runs the command, and turns any error into a one-line reason and a non-zero exit. */
export async function runCli(argv: string[], runtime: Runtime): Promise<number> {
  const json = argv.includes('--json');
  const pools: pg.Pool[] = [];
  try {
    const config = loadConfig();
    const context = createContext(config, runtime, pools);
    const program = buildProgram(context);
    await program.parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; they already printed.
      return error.exitCode;
    }
    const failure = error as Error;
    const code = failure.name || 'Error';
    const message = failure.message.split('\n')[0];
    if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    process.stderr.write(`skillsmith: ${message}\n`);
    return 1;
  } finally {
    await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
  }
}
