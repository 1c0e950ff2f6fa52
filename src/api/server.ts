import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type RawServerDefault } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { RecalledSkill } from '../recall/recall.ts';
import { createAgentSpecRepository, type AgentSpecRepository } from '../sessions/agent-spec-repository.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { createAuthenticator, loadApiTokens, type ApiTokenEntry, type Authenticator, type Principal } from './auth.ts';
import { createErrorHandler, notFoundBody } from './errors.ts';
import type { Approvals } from '../authoring/approvals.ts';
import type { SkillManage } from '../authoring/skill-manage.ts';
import type { RunReport } from '../runs/run-report.ts';
import { registerAuthoringRoutes } from './routes/authoring.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerRunRoutes } from './routes/runs.ts';
import { registerRecallRoutes } from './routes/recall.ts';
import { registerSessionRoutes } from './routes/sessions.ts';
import { registerSkillRoutes } from './routes/skills.ts';

/**
 * The HTTP API: Fastify 5 with zod schemas at every route (fastify-type-provider-zod) and an
 * OpenAPI document generated from the same schemas at /openapi.json. Built from injected
 * dependencies — nothing here reaches for globals. Authentication runs in `onRequest`, before
 * the body is read: a bad token or a missing scope is refused before anything is parsed or
 * written. A route declares its scope as `config: { scope }`; routes without one are public.
 */
export type RecallFunction = (tenantId: string, request: { goal: string; topK: number }) => Promise<RecalledSkill[]>;

/** Hands a run report to the intake (signalWithStart); validates it and refuses oversized ones. */
export type ReportRunFunction = (report: unknown) => Promise<{ workflowId: string; report: RunReport }>;

export interface ApiDependencies {
  pool: pg.Pool;
  config: Config;
  skills: SkillRepository;
  recall: RecallFunction;
  reportRun: ReportRunFunction;
  skillManage: SkillManage;
  approvals: Approvals;
  logger: Logger;
  /** Tokens to accept; defaults to those in config (SKILLSMITH_API_TOKENS). */
  tokens?: readonly ApiTokenEntry[];
}

/** What every route module receives. */
export interface ApiContext extends ApiDependencies {
  agentSpecs: AgentSpecRepository;
  authenticator: Authenticator;
}

export type ApiApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, ZodTypeProvider>;

/** One module per resource: `(app, context) => void`, registering its routes. Add a module here. */
export type ApiRouteModule = (app: ApiApp, context: ApiContext) => void;

const routeModules: ApiRouteModule[] = [
  registerHealthRoutes,
  registerRecallRoutes,
  registerSessionRoutes,
  registerSkillRoutes,
  registerRunRoutes,
  registerAuthoringRoutes,
];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The exact scope a token must hold; absent = public route. */
    scope?: string;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** The authenticated principal of a scoped route (its tenant is the only tenant the request sees). */
export function principalOf(request: { principal?: Principal }): Principal {
  if (!request.principal) throw new Error('route has no scope: no principal was authenticated');
  return request.principal;
}

export async function buildApiServer(dependencies: ApiDependencies): Promise<ApiApp> {
  const { config, logger } = dependencies;
  const authenticator = createAuthenticator(dependencies.tokens ?? loadApiTokens(config.api.tokens));
  const context: ApiContext = {
    ...dependencies,
    agentSpecs: createAgentSpecRepository({ pool: dependencies.pool, skills: dependencies.skills }),
    authenticator,
  };
  // Per-request logs only when debugging; warnings and errors always.
  const verbose = logger.level === 'debug' || logger.level === 'trace';
  const app = Fastify({
    loggerInstance: verbose ? logger : logger.child({}, { level: logger.level === 'silent' ? 'silent' : 'warn' }),
    bodyLimit: config.api.bodyLimitBytes,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  // JSON only: any other media type is refused with 415 before a handler runs.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(createErrorHandler(logger));
  app.setNotFoundHandler((request, reply) => reply.code(404).send(notFoundBody(request.method, request.url)));

  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    const principal = authenticator.authenticate(request.headers.authorization);
    authenticator.authorize(principal, scope);
    request.principal = principal;
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'skillsmith', version: '0.1.0', description: 'Recall, sessions, the pinned skill catalog and skill.load.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  for (const register of routeModules) register(app, context);
  await app.ready();
  return app;
}

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/** Builds the server and listens on host:port (config.api unless given). */
export async function startApiServer(
  dependencies: ApiDependencies,
  listen: { host?: string; port?: number } = {},
): Promise<RunningApi> {
  const app = await buildApiServer(dependencies);
  const host = listen.host ?? dependencies.config.api.host;
  const port = listen.port ?? dependencies.config.api.port;
  await app.listen({ host, port });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`, close: () => app.close() };
}
