import { z } from 'zod';
import type { RoutePlugin } from '../route-plugin.ts';

const checkSchema = z.object({ name: z.enum(['database', 'temporal', 'worker']), ok: z.boolean(), detail: z.string() });
const readinessSchema = z.object({ status: z.enum(['ready', 'not_ready']), checks: z.array(checkSchema) });

/**
 * GET /healthz — public liveness: the process answers (nothing else is touched, so a slow
 * database never makes an orchestrator restart a live process).
 * GET /readyz — public readiness: the database answers SELECT 1, Temporal answers for the
 * namespace, and a worker polls the task queue; 503 with the failing check's reason otherwise.
 */
export const healthRoutes: RoutePlugin = async (app, { services: { readiness } }) => {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'liveness: the process answers',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'readiness: the database, Temporal and a worker on the task queue',
        response: { 200: readinessSchema, 503: readinessSchema },
      },
    },
    async (_request, reply) => {
      const { ready, checks } = await readiness();
      return reply.code(ready ? 200 : 503).send({ status: ready ? ('ready' as const) : ('not_ready' as const), checks });
    },
  );
};
