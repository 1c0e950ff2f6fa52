import { z } from 'zod';
import { checkDatabase } from '../../app/readiness.ts';
import type { RoutePlugin } from '../route-plugin.ts';

const checkSchema = z.object({ name: z.enum(['database', 'temporal', 'worker']), ok: z.boolean(), detail: z.string() });
const readinessSchema = z.object({ status: z.enum(['ready', 'not_ready']), checks: z.array(checkSchema) });

/** How long /healthz waits for the database before it says `unavailable`. */
const HEALTH_DATABASE_WAIT_MS = 1_000;

/**
 * GET /healthz — public liveness: 200 whenever the process answers, so a slow or absent database
 * never makes an orchestrator restart a live process. `database` still says whether it answered
 * SELECT 1 within a second (the field this route always had), without failing the route.
 * GET /readyz — public readiness: the database answers SELECT 1, Temporal answers for the
 * namespace, and a worker polls the task queue; 503 with the failing check's reason otherwise.
 */
export const healthRoutes: RoutePlugin = async (app, { services: { readiness, pool } }) => {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'liveness: the process answers (and whether the database did)',
        response: { 200: z.object({ status: z.literal('ok'), database: z.enum(['ok', 'unavailable']) }) },
      },
    },
    async () => {
      const database = (await checkDatabase(pool, HEALTH_DATABASE_WAIT_MS)).ok ? ('ok' as const) : ('unavailable' as const);
      return { status: 'ok' as const, database };
    },
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
