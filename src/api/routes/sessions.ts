import { z } from 'zod';
import { replayRequestSchema, replaySession } from '../../sessions/replay.ts';
import { openSession, openSessionRequestSchema } from '../../sessions/session-open.ts';
import { findSession, type Session } from '../../sessions/session-repository.ts';
import { SessionNotFound } from '../../sessions/session-errors.ts';
import { loadSkill, skillLoadRequestSchema } from '../../sessions/skill-load.ts';
import { routeOptions } from '../route-options.ts';
import type { RoutePlugin } from '../route-plugin.ts';

const sourceSchema = z.enum(['builtin', 'operator', 'agent', 'mcp']);
const trustSchema = z.enum(['trusted_configuration', 'external_untrusted']);

const loadedItemSchema = z.object({
  name: z.string(),
  path: z.string().nullable(),
  revision: z.number().int(),
  tokens: z.number().int(),
  contentSha256: z.string(),
});

const sessionSchema = z
  .object({
    id: z.string(),
    agentId: z.string(),
    agentSpecVersion: z.number().int(),
    tools: z.array(z.string()),
    pins: z.array(
      z.object({
        name: z.string(),
        revision: z.number().int().describe('0 for MCP prompts'),
        contentSha256: z.string(),
        source: sourceSchema,
        trust: trustSchema,
        version: z.string(),
        description: z.string(),
        requiredTools: z.array(z.string()),
      }),
    ),
    catalog: z.string().describe('the rendered catalog, pinned at open (metadata only, never a body)'),
    catalogSha256: z.string(),
    dropped: z.array(
      z.object({ name: z.string(), revision: z.number().int(), source: sourceSchema, reason: z.enum(['entry_cap', 'token_cap']) }),
    ),
    mcpPrompts: z.array(
      z.object({ server: z.string(), name: z.string(), skillName: z.string(), description: z.string(), contentSha256: z.string() }),
    ),
    loaded: z.array(loadedItemSchema),
    createdAt: z.string(),
  })
  .meta({ id: 'Session' });

function sessionView(session: Session): z.infer<typeof sessionSchema> {
  return {
    id: session.id,
    agentId: session.agentId,
    agentSpecVersion: session.agentSpecVersion,
    tools: session.tools,
    pins: session.pins,
    catalog: session.catalog,
    catalogSha256: session.catalogSha256,
    dropped: session.dropped,
    mcpPrompts: session.mcpPrompts.map(({ server, name, skillName, description, contentSha256 }) => ({
      server,
      name,
      skillName,
      description,
      contentSha256,
    })),
    loaded: session.loaded,
    createdAt: session.createdAt.toISOString(),
  };
}

const sessionParams = z.strictObject({ id: z.uuid() });

const loadResponseSchema = z.union([
  z.object({
    name: z.string(),
    path: z.string().nullable(),
    content: z.string(),
    revision: z.number().int(),
    trust: trustSchema,
    missingTools: z.array(z.string()).describe('required tools the session did not pin (the load still succeeds)'),
    tokens: z.number().int(),
    alreadyLoaded: z.boolean(),
    loaded: z.array(loadedItemSchema),
  }),
  z.object({ name: z.string(), unloaded: z.array(loadedItemSchema), loaded: z.array(loadedItemSchema) }),
]);

/** Sessions: open (pins + catalog), read, skill.load and replay. Scopes session.write / session.read. */
export const sessionRoutes: RoutePlugin = async (app, { services }) => {
  app.post(
    '/v1/sessions',
    routeOptions('session.write', {
      summary: "open a session: resolve the agent spec's refs into pins and pin the catalog",
      body: openSessionRequestSchema,
      response: { 201: sessionSchema },
    }),
    async (request, reply) => {
      const { tenantId } = request.principal;
      const session = await openSession(services, tenantId, request.body);
      return reply.code(201).send(sessionView(session));
    },
  );

  app.get(
    '/v1/sessions/:id',
    routeOptions('session.read', {
      summary: 'a session as pinned at open, with what is loaded now',
      params: sessionParams,
      response: { 200: sessionSchema },
    }),
    async (request) => {
      const { tenantId } = request.principal;
      const session = await findSession(services.pool, tenantId, request.params.id);
      if (!session) throw new SessionNotFound(request.params.id);
      return sessionView(session);
    },
  );

  app.post(
    '/v1/sessions/:id/skills/load',
    routeOptions('session.write', {
      summary: "skill.load: a catalog entry's body or one package member; unload: true frees its slot",
      params: sessionParams,
      body: skillLoadRequestSchema,
      response: { 200: loadResponseSchema },
    }),
    async (request) => {
      const { tenantId } = request.principal;
      const result = await loadSkill(services, tenantId, request.params.id, request.body);
      if (result.kind === 'unloaded') return { name: result.name, unloaded: result.unloaded, loaded: result.loaded };
      const { kind: _kind, ...loaded } = result;
      return loaded;
    },
  );

  app.post(
    '/v1/sessions/:id/replay',
    routeOptions('session.write', {
      summary: "resolve the session's pins (never refs) and compare content_sha256; 409 names a mismatching pin",
      params: sessionParams,
      body: replayRequestSchema.nullish(),
      response: {
        200: z.object({
          sessionId: z.string(),
          pins: z.array(z.object({ name: z.string(), revision: z.number().int(), contentSha256: z.string(), source: z.string() })),
          catalogSha256: z.string(),
        }),
      },
    }),
    async (request) => {
      const { tenantId } = request.principal;
      return replaySession(services, tenantId, request.params.id, request.body ?? {});
    },
  );
};
