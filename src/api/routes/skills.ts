import { z } from 'zod';
import { summarizeRevision } from '../../skills/skill-summary.ts';
import { errorResponseSchema } from '../errors.ts';
import { principalOf, type ApiApp, type ApiContext } from '../server.ts';

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
export function registerSkillRoutes(app: ApiApp, { skills }: ApiContext): void {
  app.get(
    '/v1/skills',
    {
      config: { scope: 'skill.read' },
      schema: {
        summary: 'active skills of the token\'s tenant (metadata, never bodies)',
        security: [{ bearer: [] }],
        querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
        response: { 200: z.object({ skills: z.array(skillSummarySchema) }), '4xx': errorResponseSchema },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      return { skills: (await skills.listActive(tenantId, request.query.limit)).map(summarizeRevision) };
    },
  );
}
