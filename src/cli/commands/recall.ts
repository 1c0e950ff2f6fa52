import type { Command } from 'commander';
import type { Procedure } from '../../procedures/procedure.ts';
import type { CliContext } from '../context.ts';

type GlobalOptions = { tenant: string; json: boolean };

function formatProcedure(procedure: Procedure): string {
  const state = procedure.supersededBy ? 'superseded' : procedure.enabled ? 'enabled' : 'disabled';
  return `${procedure.name}@${procedure.revision}  ${state}  ${procedure.successCount}/${procedure.attemptCount} ok  last used ${procedure.lastUsedAt?.toISOString() ?? 'never'}\n  ${procedure.whenToUse}`;
}

export function registerRecallCommands(program: Command, context: CliContext): void {
  const { config } = context;

  program
    .command('recall <goal>')
    .description(
      'the learned skills for a goal: enabled, not superseded, matching its learned goals or description at the recall threshold',
    )
    .option('--top-k <k>', 'at most this many', '2')
    .action(async (goal: string, options: { topK: string }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const services = await context.services();
      const matches = await services.recall(tenant, { goal, topK: options.topK });
      // Its use (last_used_at) is written before the process ends.
      await services.recallUsage.flush();
      context.output.result(json, { goal, matches }, () =>
        matches.length
          ? matches
              .map(
                (match) =>
                  `${match.name}@${match.revision}  score ${match.score.toFixed(3)}  tools ${match.toolsRequired.join(', ')}\n${match.whenToUse}\n\n${match.body}`,
              )
              .join('\n\n---\n\n')
          : `no learned skill matches (recall threshold ${config.recall.threshold})`,
      );
    });

  const procedures = program
    .command('procedures')
    .description('learned skills and their track records')
    .action(async (_options, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const { listProcedures } = await import('../../procedures/procedure-repository.ts');
      const rows = await listProcedures(await context.openPool(), tenant);
      context.output.result(json, { procedures: rows }, () =>
        rows.length ? rows.map(formatProcedure).join('\n') : `no procedures yet for tenant ${tenant}`,
      );
    });

  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    procedures
      .command(`${name} <name>`)
      .description(enabled ? 'make a procedure recallable again' : 'stop recalling a procedure (kept, not deleted)')
      .action(async (procedureName: string, _options, command: Command) => {
        const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
        const { setProcedureEnabled } = await import('../../procedures/procedure-repository.ts');
        const procedure = await setProcedureEnabled(await context.openPool(), tenant, procedureName, enabled);
        context.logger.info({ tenantId: tenant, procedure: procedure.name, enabled }, `procedure ${name}d`);
        context.output.result(json, procedure, () => formatProcedure(procedure));
      });
  }
}
