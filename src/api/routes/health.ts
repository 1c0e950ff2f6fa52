import { z } from 'zod';
import type { RoutePlugin } from '../route-plugin.ts';

/** GET /healthz — public: the process answers and the database answers. */
export const healthRoutes: RoutePlugin = async (app, { services: { pool } }) => {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'liveness and database reachability',
        response: { 200: z.object({ status: z.literal('ok'), database: z.literal('ok') }) },
      },
    },
    async () => {
      await pool.query('SELECT 1');
      return { status: 'ok' as const, database: 'ok' as const };
    },
  );
};
