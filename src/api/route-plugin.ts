import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../app/services.ts';
import type { ProcessMetrics } from '../metrics/process-metrics.ts';

/** What the routes use of the application services, and the API process's own metrics. */
export type ApiServices = Pick<
  Services,
  | 'pool'
  | 'config'
  | 'logger'
  | 'skills'
  | 'agentSpecs'
  | 'skillManage'
  | 'approvals'
  | 'recall'
  | 'reportRun'
  | 'rollout'
  | 'readiness'
  | 'storageFailures'
> & { processMetrics: ProcessMetrics };

/** One Fastify plugin per resource (src/api/routes/*), registered by the server with the services. */
export type RoutePlugin = FastifyPluginAsyncZod<{ services: ApiServices }>;
