import { z } from 'zod';
import { storableString } from '../../input/storable-text.ts';
import { originTrustSchema, skillManageRequestSchema } from '../../authoring/skill-manage-contract.ts';
import type { Approval } from '../../authoring/approval.ts';
import { OriginTrustNotAllowed } from '../auth.ts';
import { originTrustExceeds } from '../../authoring/skill-manage-policy.ts';
import { routeOptions } from '../route-options.ts';
import { findSession } from '../../sessions/session-repository.ts';
import { SessionNotFound } from '../../sessions/session-errors.ts';
import type { RoutePlugin } from '../route-plugin.ts';

const manageBodySchema = z.strictObject({
  /** The tool invocation this call is; with the canonical argument hash, its idempotency key. */
  invocationId: storableString().min(1).max(200),
  runId: storableString().min(1).max(128),
  /** The trust of the turn that proposes the write; below "user" is denied, above the token's maxOriginTrust refused. */
  originTrust: originTrustSchema,
  taint: storableString().max(500).optional(),
  sessionId: storableString().min(1).max(200).optional(),
  request: skillManageRequestSchema,
});

const approvalSchema = z.object({
  id: z.string(),
  status: z.string(),
  operation: z.string(),
  skillName: z.string(),
  currentRevision: z.number().int(),
  proposedRevision: z.number().int(),
  diff: z.string(),
  memberChanges: z.unknown(),
  requestedByPrincipalId: z.string(),
  requestedByRunId: z.string(),
  createdAt: z.string(),
  resolvedAt: z.string().nullable(),
  resolvedBy: z.string().nullable(),
  resolutionReason: z.string().nullable(),
  installedRevision: z.number().int().nullable(),
});

function present(approval: Approval): z.infer<typeof approvalSchema> {
  return {
    id: approval.id,
    status: approval.status,
    operation: approval.operation,
    skillName: approval.skillName,
    currentRevision: approval.currentRevision,
    proposedRevision: approval.proposedRevision,
    diff: approval.diff,
    memberChanges: approval.memberChanges,
    requestedByPrincipalId: approval.requestedByPrincipalId,
    requestedByRunId: approval.requestedByRunId,
    createdAt: approval.createdAt.toISOString(),
    resolvedAt: approval.resolvedAt?.toISOString() ?? null,
    resolvedBy: approval.resolvedBy,
    resolutionReason: approval.resolutionReason,
    installedRevision: approval.installedRevision,
  };
}

/**
 * POST /v1/skills/manage (skill_manage, scope skill.write), GET /v1/approvals (approval.read),
 * POST /v1/approvals/{id}/resolve (approval.resolve). Principal and scopes come from the token.
 */
export const authoringRoutes: RoutePlugin = async (app, { services: { skillManage, approvals, pool } }) => {
  app.post(
    '/v1/skills/manage',
    routeOptions('skill.write', {
      summary: 'skill_manage: create / edit / patch / archive an agent skill, under governance',
      body: manageBodySchema,
      response: { 200: z.record(z.string(), z.unknown()) },
    }),
    async (request) => {
      const { principal } = request;
      const { request: manageRequest, ...turn } = request.body;
      if (originTrustExceeds(turn.originTrust, principal.maxOriginTrust)) {
        throw new OriginTrustNotAllowed(turn.originTrust, principal.maxOriginTrust);
      }
      // The session is recorded on the skill's events: another tenant's (or none) is refused, not taken on trust.
      if (turn.sessionId !== undefined && !(await findSession(pool, principal.tenantId, turn.sessionId))) {
        throw new SessionNotFound(turn.sessionId);
      }
      return skillManage.manage(
        { tenantId: principal.tenantId, principalId: principal.principal, scopes: [...principal.scopes], ...turn },
        manageRequest,
      );
    },
  );

  app.get(
    '/v1/approvals',
    routeOptions(
      'approval.read',
      {
        summary: "the tenant's skill-authoring approvals (pending ones past their TTL expire first)",
        querystring: z.strictObject({ status: z.enum(['pending', 'approved', 'rejected', 'expired', 'conflicted']).optional() }),
        response: { 200: z.object({ approvals: z.array(approvalSchema) }) },
      },
      { serverErrors: false },
    ),
    async (request) => {
      const { tenantId } = request.principal;
      const listed = await approvals.list(tenantId, request.query.status ? { status: request.query.status } : {});
      return { approvals: listed.map(present) };
    },
  );

  app.post(
    '/v1/approvals/:id/resolve',
    routeOptions(
      'approval.resolve',
      {
        summary: 'approve (installs the proposed revision, CAS on the recorded one) or reject an approval',
        params: z.strictObject({ id: storableString().min(1).max(100) }),
        body: z.strictObject({ decision: z.enum(['approve', 'reject']), reason: storableString().max(1000).optional() }),
        response: { 200: approvalSchema },
      },
      { serverErrors: false },
    ),
    async (request) => {
      const { tenantId, principal } = request.principal;
      const resolved =
        request.body.decision === 'approve'
          ? await approvals.approve(tenantId, request.params.id, { resolvedBy: principal })
          : await approvals.reject(tenantId, request.params.id, {
              resolvedBy: principal,
              ...(request.body.reason ? { reason: request.body.reason } : {}),
            });
      return present(resolved);
    },
  );
};
