import { z } from 'zod';
import { routeOptions } from '../route-options.ts';
import type { RoutePlugin } from '../route-plugin.ts';
import { SkillsmithError } from '../../errors/skillsmith-error.ts';
import { tenantIdSchema } from '../../input/tenant-id.ts';
import { convertTraceDocument, TraceNotConvertible } from '../../traces/trace-document.ts';
import { detectRecordFormat } from '../../traces/trace-format-detection.ts';
import { INGEST_FORMATS, UNKNOWN_TIME } from '../../traces/trace-run.ts';

/** The body names another tenant than the token's: the tenant always comes from the token. */
export class TenantMismatch extends SkillsmithError {
  static override readonly code = 'TenantMismatch';
  static override readonly httpStatus = 403;
}

/**
 * A run taken in: `workflowId` is the intake it was signalled to (`intake/<tenant>/<agent>`: one per
 * tenant, which may be another agent's), or its own agent's when nothing was sent;
 * `review` says whether the run went on to its tenant's intake for a review (`scheduled`) or no
 * review can want it (`none`: no tool call, or nothing to review it for), so nothing was sent.
 */
const acceptedRunSchema = z.object({ runId: z.string(), workflowId: z.string(), review: z.enum(['scheduled', 'none']) });

/**
 * POST /v1/runs — a finished run, into the same intake path as the Temporal signal
 * (`reportRunCompleted`): validated here, then again by the worker (scope run.write).
 * `?format=` says what the body is: a run report (the default, the contract unchanged), or a
 * trace an agent already emits (`openai`, `anthropic`, `otel`; `auto` detects it), converted to
 * run reports first — an OTLP export makes one run per trace. The answer then also names the
 * format read and every run made.
 */
export const runRoutes: RoutePlugin = async (app, { services: { reportRun, processMetrics } }) => {
  app.post(
    '/v1/runs',
    routeOptions('run.write', {
      summary:
        'report a finished run (the run report contract, or with ?format= an OpenAI / Anthropic transcript or an OTLP JSON export of GenAI spans); recorded once per runId, reviewed at most once',
      // Not strict: a client's extra query parameters were ignored before `format` existed, and still are.
      querystring: z.object({
        format: z.enum(INGEST_FORMATS).default('run-report'),
        /** The agentId of converted traces (default: the trace's agent name, else the format's name). */
        agentId: z.string().min(1).max(128).optional(),
      }),
      // The contract is validated by the intake client, which names every field that is wrong; the
      // tenant is checked here, against the token, so it must be a tenant id before it is compared.
      // A trace may be a bare array of messages.
      body: z.union([z.looseObject({ tenantId: tenantIdSchema.optional() }), z.array(z.unknown())]),
      response: {
        202: acceptedRunSchema.extend({
          format: z.enum(INGEST_FORMATS).exclude(['auto']).optional(),
          runs: z.array(acceptedRunSchema).optional(),
        }),
      },
    }),
    async (request, reply) => {
      const { tenantId } = request.principal;
      const { body } = request;
      /** One report into the intake, counted accepted or refused (with the refusal's code). */
      const acceptRun = async (report: unknown) => {
        let accepted: Awaited<ReturnType<typeof reportRun>>;
        try {
          accepted = await reportRun(report);
        } catch (error) {
          processMetrics.intakeRefused.inc({ tenant: tenantId, code: error instanceof SkillsmithError ? error.code : 'InternalError' });
          throw error;
        }
        processMetrics.intakeAccepted.inc({ tenant: tenantId });
        // A trace that carries no time (Anthropic messages) has no lag to measure.
        if (accepted.report.completedAt !== UNKNOWN_TIME) {
          const lagSeconds = Math.max(0, (Date.now() - Date.parse(accepted.report.completedAt)) / 1000);
          processMetrics.intakeLag.observe({ tenant: tenantId }, lagSeconds);
        }
        return accepted;
      };
      const requested = request.query.format;
      const format = requested === 'auto' && detectRecordFormat(body) === 'run-report' ? 'run-report' : requested;
      if (format === 'run-report') {
        const claimed = Array.isArray(body) ? undefined : body.tenantId;
        if (claimed !== undefined && claimed !== tenantId) {
          throw new TenantMismatch(
            `the report names tenant ${JSON.stringify(claimed)} but the token belongs to ${JSON.stringify(tenantId)}`,
          );
        }
        const { workflowId, report, review } = await acceptRun(Array.isArray(body) ? body : { ...body, tenantId });
        return reply.code(202).send({ runId: report.runId, workflowId, review, ...(requested === 'auto' ? { format } : {}) });
      }
      const agentId = request.query.agentId;
      const conversion = convertTraceDocument(body, format, { tenantId, ...(agentId === undefined ? {} : { agentId }) });
      if (!conversion.success)
        throw new TraceNotConvertible(conversion.format ?? format, conversion.refusal.record, conversion.refusal.reason);
      const runs: Array<z.infer<typeof acceptedRunSchema>> = [];
      for (const { report } of conversion.runs) {
        const { workflowId, report: stored, review } = await acceptRun(report);
        runs.push({ runId: stored.runId, workflowId, review });
      }
      return reply.code(202).send({ ...runs[0]!, format: conversion.format!, runs });
    },
  );
};
