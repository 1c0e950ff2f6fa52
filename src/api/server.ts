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
import { createAuthenticator, loadApiTokens, type ApiTokenEntry } from './auth.ts';
import { createErrorHandler, notFoundBody } from './errors.ts';
import { parseJsonAsStrictUtf8 } from './utf8-json-body.ts';
import type { Logger } from '../logging/logger.ts';
import { authenticationHook, principalDecorator } from './principal.ts';
import type { ApiServices, RoutePlugin } from './route-plugin.ts';
import { authoringRoutes } from './routes/authoring.ts';
import { healthRoutes } from './routes/health.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { createProcessMetrics, type ProcessMetrics } from '../metrics/process-metrics.ts';
import { runRoutes } from './routes/runs.ts';
import { recallRoutes } from './routes/recall.ts';
import { rolloutRoutes } from './routes/rollout.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { skillRoutes } from './routes/skills.ts';

/**
 * The HTTP API: Fastify 5 with zod schemas at every route (fastify-type-provider-zod) and an
 * OpenAPI document generated from the same schemas at /openapi.json. Built from the injected
 * application services (src/app) — nothing here reaches for globals. A route declares its scope
 * with `routeOptions(scope, schema)`; routes without one are public.
 */
export interface ApiDependencies extends Omit<ApiServices, 'processMetrics'> {
  /** Tokens to accept; defaults to those in config (SKILLSMITH_API_TOKENS). */
  tokens?: readonly ApiTokenEntry[];
  /** The process's metrics registry (GET /metrics); a new one unless given. */
  processMetrics?: ProcessMetrics;
  /** The running stack's local secret: its local tokens are accepted (local-token.ts). */
  localSecret?: string;
}

export type ApiApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, ZodTypeProvider>;

/** One plugin per resource. Add a module here. */
const routePlugins: RoutePlugin[] = [
  healthRoutes,
  recallRoutes,
  sessionRoutes,
  skillRoutes,
  runRoutes,
  authoringRoutes,
  rolloutRoutes,
  metricsRoutes,
];

export async function buildApiServer(dependencies: ApiDependencies): Promise<ApiApp> {
  const { tokens, processMetrics, localSecret, ...rest } = dependencies;
  const services: ApiServices = { ...rest, processMetrics: processMetrics ?? createProcessMetrics() };
  const { config, logger } = services;
  const authenticator = createAuthenticator(tokens ?? loadApiTokens(config.api.tokens), localSecret);
  // Per-request logs only when debugging; warnings and errors always.
  const verbose = logger.level === 'debug' || logger.level === 'trace';
  const app = Fastify({
    loggerInstance: verbose ? logger : logger.child({}, { level: logger.level === 'silent' ? 'silent' : 'warn' }),
    bodyLimit: config.api.bodyLimitBytes,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  // JSON only: any other media type is refused with 415 before a handler runs.
  app.removeContentTypeParser('text/plain');
  parseJsonAsStrictUtf8(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(createErrorHandler(logger, services.storageFailures));
  app.setNotFoundHandler((request, reply) => reply.code(404).send(notFoundBody(request.method, request.url)));

  app.decorateRequest('principal', principalDecorator);
  app.addHook('onRequest', authenticationHook(authenticator));

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
  for (const plugin of routePlugins) await app.register(plugin, { services });
  await app.ready();
  return app;
}

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/** Builds the server and listens on host:port (config.api unless given). */
export async function startApiServer(dependencies: ApiDependencies, listen: { host?: string; port?: number } = {}): Promise<RunningApi> {
  const app = await buildApiServer(dependencies);
  const host = listen.host ?? dependencies.config.api.host;
  const port = listen.port ?? dependencies.config.api.port;
  await app.listen({ host, port });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`, close: () => app.close() };
}
