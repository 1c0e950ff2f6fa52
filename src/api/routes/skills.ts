import { z } from 'zod';
import { summarizeRevision } from '../../skills/skill-summary.ts';
import { routeOptions } from '../route-options.ts';
import type { RoutePlugin } from '../route-plugin.ts';

// The response schema picks the API's fields of the shared summary (zod drops the rest).
const skillSummarySchema = z.object({
  name: z.string(),
  revision: z.number().int(),
  version: z.string(),
  description: z.string(),
  requiredTools: z.array(z.string()),
  license: z.string(),
  source: z.string(),
  trust: z.string(),
  contentSha256: z.string(),
  fileCount: z.number().int(),
  bodyTokens: z.number().int(),
  createdAt: z.string(),
});

/** GET /v1/skills — the newest active revision of each of the tenant's skills, metadata only (scope skill.read). */
export const skillRoutes: RoutePlugin = async (app, { services: { skills } }) => {
  app.get(
    '/v1/skills',
    routeOptions(
      'skill.read',
      {
        summary: "active skills of the token's tenant (metadata, never bodies)",
        querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
        response: { 200: z.object({ skills: z.array(skillSummarySchema) }) },
      },
      { serverErrors: false },
    ),
    async (request) => {
      const { tenantId } = request.principal;
      return { skills: (await skills.listActive(tenantId, request.query.limit)).map(summarizeRevision) };
    },
  );
};
