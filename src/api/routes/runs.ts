import { z } from 'zod';
import { routeOptions } from '../route-options.ts';
import type { RoutePlugin } from '../route-plugin.ts';
import { SkillsmithError } from '../../skillsmith-error.ts';
import { tenantIdSchema } from '../../tenant.ts';

/** The body names another tenant than the token's: the tenant always comes from the token. */
export class TenantMismatch extends SkillsmithError {
  static override readonly code = 'TenantMismatch';
  static override readonly httpStatus = 403;
}

/**
 * POST /v1/runs — a finished run, into the same intake path as the Temporal signal
 * (`reportRunCompleted`): validated here, then again by the worker (scope run.write).
 */
export const runRoutes: RoutePlugin = async (app, { services: { reportRun, processMetrics } }) => {
  app.post(
    '/v1/runs',
    routeOptions('run.write', {
      summary: 'report a finished run (the run report contract); recorded once per runId, reviewed at most once',
      // The contract is validated by the intake client, which names every field that is wrong; the
      // tenant is checked here, against the token, so it must be a tenant id before it is compared.
      body: z.looseObject({ tenantId: tenantIdSchema.optional() }),
      response: { 202: z.object({ runId: z.string(), workflowId: z.string() }) },
    }),
    async (request, reply) => {
      const { tenantId } = request.principal;
      const claimed = request.body.tenantId;
      if (claimed !== undefined && claimed !== tenantId) {
        throw new TenantMismatch(`the report names tenant ${JSON.stringify(claimed)} but the token belongs to ${JSON.stringify(tenantId)}`);
      }
      let accepted: Awaited<ReturnType<typeof reportRun>>;
      try {
        accepted = await reportRun({ ...request.body, tenantId });
      } catch (error) {
        processMetrics.intakeRefused.inc({ tenant: tenantId, code: error instanceof SkillsmithError ? error.code : 'InternalError' });
        throw error;
      }
      const { workflowId, report } = accepted;
      processMetrics.intakeAccepted.inc({ tenant: tenantId });
      processMetrics.intakeLag.observe({ tenant: tenantId }, Math.max(0, (Date.now() - Date.parse(report.completedAt)) / 1000));
      return reply.code(202).send({ runId: report.runId, workflowId });
    },
  );
};
