import { z } from 'zod';
import { recallRequestSchema } from '../../recall/recall.ts';
import { routeOptions } from '../route-options.ts';
import type { RoutePlugin } from '../route-plugin.ts';

const recalledSkillSchema = z.object({
  name: z.string(),
  whenToUse: z.string(),
  body: z.string().describe('SKILL.md body, cut at 1,500 characters with "… (truncated)"'),
  toolsRequired: z.array(z.string()),
  revision: z.number().int(),
  score: z.number(),
});

/** GET /v1/recall?goal=&topK= — recall_skill for the token's tenant (scope recall.read). */
export const recallRoutes: RoutePlugin = async (app, { services: { recall } }) => {
  app.get(
    '/v1/recall',
    routeOptions('recall.read', {
      summary:
        'the procedures for a goal: matched on the goals they were learned from and their when_to_use, fused with full-text match; enabled, not superseded, at the recall threshold',
      querystring: recallRequestSchema,
      response: { 200: z.object({ skills: z.array(recalledSkillSchema) }) },
    }),
    async (request) => {
      const { tenantId } = request.principal;
      return { skills: await recall(tenantId, { goal: request.query.goal, topK: request.query.topK }) };
    },
  );
};
