import { z } from 'zod';
import { errorResponseSchema } from '../errors.ts';
import { principalOf, type ApiApp, type ApiContext } from '../server.ts';
import { SkillsmithError } from '../../skillsmith-error.ts';

/** The body names another tenant than the token's: the tenant always comes from the token. */
export class TenantMismatch extends SkillsmithError {
  static override readonly code = 'TenantMismatch';
  static override readonly httpStatus = 403;
}

/**
 * POST /v1/runs — a finished run, into the same intake path as the Temporal signal
 * (`reportRunCompleted`): validated here, then again by the worker (scope run.write).
 */
export function registerRunRoutes(app: ApiApp, { reportRun }: ApiContext): void {
  app.post(
    '/v1/runs',
    {
      config: { scope: 'run.write' },
      schema: {
        summary: 'report a finished run (the run report contract); recorded once per runId, reviewed at most once',
        security: [{ bearer: [] }],
        // The contract is validated by the intake client, which names every field that is wrong.
        body: z.record(z.string(), z.unknown()),
        response: {
          202: z.object({ runId: z.string(), workflowId: z.string() }),
          '4xx': errorResponseSchema,
          '5xx': errorResponseSchema,
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      const claimed = request.body['tenantId'];
      if (claimed !== undefined && claimed !== tenantId) {
        throw new TenantMismatch(`the report names tenant ${JSON.stringify(claimed)} but the token belongs to ${JSON.stringify(tenantId)}`);
      }
      const { workflowId, report } = await reportRun({ ...request.body, tenantId });
      return reply.code(202).send({ runId: report.runId, workflowId });
    },
  );
}
