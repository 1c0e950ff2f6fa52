import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

export function registerMigrateCommands(program: Command, context: CliContext): void {
  program
    .command('migrate')
    .description('apply the schema migrations (schema/NNN_*.sql) that are not yet applied')
    .action(async (_options, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const [{ createPool }, { migrate }] = await Promise.all([import('../../store/database.ts'), import('../../store/migrations.ts')]);
      const pool = createPool(await context.databaseUrl());
      try {
        const result = await migrate(pool);
        context.output.result(json, result, () =>
          result.applied.length
            ? `applied ${result.applied.join(', ')} (${result.alreadyApplied.length} already applied)`
            : `schema is up to date (${result.alreadyApplied.length} migrations)`,
        );
      } finally {
        await pool.end();
      }
    });
}
