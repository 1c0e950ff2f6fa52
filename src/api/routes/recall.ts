import { z } from 'zod';
import { recallRequestSchema } from '../../recall/recall.ts';
import { errorResponseSchema } from '../errors.ts';
import { principalOf, type ApiApp, type ApiContext } from '../server.ts';

const recalledSkillSchema = z.object({
  name: z.string(),
  whenToUse: z.string(),
  body: z.string().describe('SKILL.md body, cut at 1,500 characters with "… (truncated)"'),
  toolsRequired: z.array(z.string()),
  revision: z.number().int(),
  score: z.number(),
});

/** GET /v1/recall?goal=&topK= — recall_skill for the token's tenant (scope recall.read). */
export function registerRecallRoutes(app: ApiApp, { recall }: ApiContext): void {
  app.get(
    '/v1/recall',
    {
      config: { scope: 'recall.read' },
      schema: {
        summary: 'the procedures nearest to a goal (cosine ≥ τ, enabled, not superseded)',
        security: [{ bearer: [] }],
        querystring: recallRequestSchema,
        response: { 200: z.object({ skills: z.array(recalledSkillSchema) }), '4xx': errorResponseSchema, '5xx': errorResponseSchema },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return { skills: await recall(tenantId, { goal: request.query.goal, topK: request.query.topK }) };
    },
  );
}
