import { z } from 'zod';
import { combinationSchema } from '../../rollout/paired-evidence.ts';
import { routeOptions } from '../route-options.ts';
import type { RoutePlugin } from '../route-plugin.ts';

const checkDocumentSchema = z.object({
  n: z.number().int(),
  b: z.number().int(),
  c: z.number().int(),
  improvement: z.number().describe('(b − c) / n as a fraction: 0.05 = 5 points'),
  interval: z.object({ lower: z.number(), upper: z.number() }).describe('the 95 % paired-difference interval'),
  policyRegression: z.boolean(),
  passed: z.boolean(),
  reasons: z.array(z.string()),
  policyFailures: z.object({ baseline: z.number().int(), authored: z.number().int(), regressedCases: z.number().int() }),
  tenantId: z.string(),
  combination: combinationSchema,
});

const recordResultSchema = z.object({
  samples: z.number().int(),
  valid: z.number().int(),
  invalid: z.number().int(),
  inserted: z.number().int(),
  unchanged: z.number().int(),
  errors: z.array(
    z.object({
      line: z.number().int().describe('1-based position in `pairs`'),
      path: z.string(),
      reason: z.string(),
      value: z.string().optional(),
    }),
  ),
});

/**
 * POST /v1/rollout/evidence (scope rollout.write) records paired samples for the token's tenant,
 * all or nothing (400 with every error); GET /v1/rollout/check (scope rollout.read) is
 * `skillsmith rollout check --json`.
 */
export const rolloutRoutes: RoutePlugin = async (app, { services: { rollout } }) => {
  app.post(
    '/v1/rollout/evidence',
    routeOptions('rollout.write', {
      summary: 'record paired evaluation samples (the pairs-file contract, one object per case)',
      body: z.object({ pairs: z.array(z.unknown()).min(1) }),
      response: { 200: recordResultSchema, 400: recordResultSchema },
    }),
    async (request, reply) => {
      const result = await rollout.recordSamples(request.principal.tenantId, request.body.pairs);
      return reply.code(result.invalid > 0 ? 400 : 200).send(result);
    },
  );

  app.get(
    '/v1/rollout/check',
    routeOptions('rollout.read', {
      summary: 'the paired-evaluation gate for one combination of the token tenant',
      querystring: combinationSchema,
      response: { 200: checkDocumentSchema },
    }),
    async (request) => rollout.check(request.principal.tenantId, request.query),
  );
};
