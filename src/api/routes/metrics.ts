import { METRICS_CONTENT_TYPE, renderMetrics } from '../../metrics/metrics-exposition.ts';
import type { RoutePlugin } from '../route-plugin.ts';

/**
 * GET /metrics — the Prometheus text exposition (src/metrics). By default it needs a token with
 * the scope `metrics.read` and shows that token's tenant only (a tenant's skill names are its
 * data); the process series (CPU, memory, event loop) carry no tenant. SKILLSMITH_METRICS_PUBLIC
 * serves every tenant without a token, for a Prometheus on a private network.
 */
export const METRICS_SCOPE = 'metrics.read';

export const metricsRoutes: RoutePlugin = async (app, { services: { pool, config, processMetrics } }) => {
  const summary = 'Prometheus metrics: the process, the intake, synthesis passes and every tracked skill metric';
  const security: Array<Record<string, string[]>> = config.metrics.public ? [] : [{ bearer: [] }];
  app.get(
    '/metrics',
    { config: { scope: config.metrics.public ? undefined : METRICS_SCOPE }, schema: { summary, security } },
    async (request, reply) => {
      const tenantId = config.metrics.public ? null : request.principal.tenantId;
      const exposition = await renderMetrics(pool, processMetrics, { tenantId });
      return reply.type(METRICS_CONTENT_TYPE).send(exposition);
    },
  );
};
