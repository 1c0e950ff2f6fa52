import type { Command } from 'commander';
import type { Procedure } from '../../procedures/procedure.ts';
import type { RecalledSkill } from '../../recall/recall.ts';
import type { CliContext } from '../context.ts';

type GlobalOptions = { tenant: string; json: boolean };

function formatProcedure(procedure: Procedure): string {
  const state = procedure.supersededBy ? 'superseded' : procedure.enabled ? 'enabled' : 'disabled';
  return `${procedure.name}@${procedure.revision}  ${state}  ${procedure.successCount}/${procedure.attemptCount} ok  last used ${procedure.lastUsedAt?.toISOString() ?? 'never'}\n  ${procedure.whenToUse}`;
}

/** One match as `recall --json` prints it, whichever process answered: the same fields in the same order (a contract). */
function recallMatch({ name, whenToUse, body, toolsRequired, revision, score }: RecalledSkill): RecalledSkill {
  return { name, whenToUse, body, toolsRequired, revision, score };
}

/**
 * The recall of a goal: through the running stack's API when one is up (it holds the tenant's model
 * loaded, so this process loads none), else in this process. A model set here that the tenant was
 * not embedded with is refused either way (src/app/tenant-config.ts).
 */
async function recallForCli(
  context: CliContext,
  tenant: string,
  request: { goal: string; topK: string; local: boolean },
): Promise<{ matches: RecalledSkill[]; threshold: string }> {
  // Loaded here, not for `--help`.
  const { openStackApi } = await import('../stack-api.ts');
  const stack = request.local ? undefined : await openStackApi(context.config);
  if (stack) {
    if (context.config.modelChoice?.explicit) {
      const { configForTenant } = await import('../../app/tenant-config.ts');
      await configForTenant(await context.openPool(), context.config, tenant);
    }
    const answer = (await stack.get(tenant, '/v1/recall', { goal: request.goal, topK: request.topK })) as { skills: RecalledSkill[] };
    return {
      matches: answer.skills.map(recallMatch),
      threshold: `the tenant's recall threshold; answered by the stack at ${stack.apiUrl}`,
    };
  }
  // A goal or --top-k recall would refuse is refused before the database is opened and the model loaded (a second of CPU).
  const { recallRequestSchema } = await import('../../recall/recall.ts');
  recallRequestSchema.parse({ goal: request.goal, topK: request.topK });
  const services = await context.services();
  const matches = await services.recall(tenant, { goal: request.goal, topK: request.topK });
  // Its use (last_used_at) is written before the process ends.
  await services.recallUsage.flush();
  const threshold = (await services.tenantConfig(tenant)).recall.threshold;
  return { matches: matches.map(recallMatch), threshold: `recall threshold ${threshold}` };
}

export function registerRecallCommands(program: Command, context: CliContext): void {
  program
    .command('recall <goal>')
    .description(
      'the learned skills for a goal: enabled, not superseded, matching its learned goals or description at the recall threshold and at the bar its own learned goals set; ' +
        'through the running stack when one is up (no model loaded here)',
    )
    .option('--top-k <k>', 'at most this many', '2')
    .option('--local', 'embed the goal in this process even when a stack is up', false)
    .action(async (goal: string, options: { topK: string; local: boolean }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const { matches, threshold } = await recallForCli(context, tenant, { goal, topK: options.topK, local: options.local });
      context.output.result(json, { goal, matches }, () =>
        matches.length
          ? matches
              .map(
                (match) =>
                  `${match.name}@${match.revision}  score ${match.score.toFixed(3)}  tools ${match.toolsRequired.join(', ')}\n${match.whenToUse}\n\n${match.body}`,
              )
              .join('\n\n---\n\n')
          : `no learned skill matches (${threshold})`,
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
