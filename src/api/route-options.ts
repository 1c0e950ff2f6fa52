import type { FastifySchema } from 'fastify';
import { errorResponseSchema } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The exact scope a token must hold; absent = public route. */
    scope?: string;
  }
}

const clientErrors = { '4xx': errorResponseSchema };
const allErrors = { ...clientErrors, '5xx': errorResponseSchema };

/**
 * The options every scoped route shares: its scope (checked before the body is read), the bearer
 * security requirement in the OpenAPI document, and the error body for 4xx — and 5xx, unless the
 * route documents `serverErrors: false`.
 */
export function routeOptions<Schema extends FastifySchema & { response: Record<string, unknown> }>(
  scope: string,
  schema: Schema,
  { serverErrors = true }: { serverErrors?: boolean } = {},
) {
  return {
    config: { scope },
    schema: { ...schema, security: [{ bearer: [] }], response: { ...schema.response, ...(serverErrors ? allErrors : clientErrors) } },
  };
}
