import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith metrics [--tenant T] [--json]`: the tenant's tracked skill metrics — authoring
 * denials by reason, conflicts, writes, approvals by status with latency, loads.
 * JSON shape: AuthoringMetrics (src/authoring/authoring-metrics.ts).
 */
export function registerMetricsCommands(program: Command, context: CliContext): void {
  program
    .command('metrics')
    .description("print the tenant's skill metrics: authoring denials by reason, conflicts, approvals and latency, loads")
    .action(async (_options: unknown, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<{ tenant: string; json: boolean }>();
      const { collectAuthoringMetrics, formatAuthoringMetrics } = await import('../../authoring/authoring-metrics.ts');
      const pool = await context.openPool();
      const metrics = await collectAuthoringMetrics(pool, tenant);
      context.output.result(json, metrics, () => formatAuthoringMetrics(metrics));
    });
}
