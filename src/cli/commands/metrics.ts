import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith metrics [--tenant T] [--json]`: the tenant's tracked skill metrics — authoring
 * denials by reason, conflicts and the conflict rate, writes, approvals by status with latency,
 * loads and load-to-completion per skill against the tenant baseline, catalog drops, the skill
 * selection rate, revisions per skill per month, the eval delta and the synthesis passes.
 * JSON shape: TenantMetrics (src/metrics/tenant-metrics.ts), a superset of AuthoringMetrics.
 */
export function registerMetricsCommands(program: Command, context: CliContext): void {
  program
    .command('metrics')
    .description("print the tenant's tracked skill metrics (the same numbers GET /metrics exposes to Prometheus)")
    .action(async (_options: unknown, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<{ tenant: string; json: boolean }>();
      const { collectTenantMetrics, formatTenantMetrics } = await import('../../metrics/tenant-metrics.ts');
      const pool = await context.openPool();
      const [metrics] = await collectTenantMetrics(pool, tenant);
      context.output.result(json, metrics!, () => formatTenantMetrics(metrics!));
    });
}
