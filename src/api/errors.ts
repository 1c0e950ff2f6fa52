import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { z, ZodError } from 'zod';
import type { Logger } from '../logging/logger.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import type { StorageFailureMemory } from '../app/storage-failure-memory.ts';
import { databaseFailure, StorageFull } from '../store/database-failure.ts';

/**
 * Every error leaves the API as `{error: {code, message, details}}`. `code` is the stable code of
 * the domain error (or of the HTTP-level refusal); a domain error's status is its own `httpStatus`.
 */
export const errorResponseSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof errorResponseSchema>;

/** The error's own data fields (the ones domain errors declare), safe to return as details. */
function ownDetails(error: Error): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause') continue;
    details[key] = value;
  }
  return details;
}

function body(code: string, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { error: { code, message, details } };
}

/**
 * A domain error's answer: its own status and code; a 503 also says when to try again. The
 * database's own trouble (a lost connection, a full disk) arrives as the driver's error and
 * leaves as `DatabaseUnavailable` or `StorageFull`, never as a 500.
 */
export function createErrorHandler(logger: Logger, storageFailures?: StorageFailureMemory) {
  return function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const issues = error.validation.map((issue) => ({
        path: issue.instancePath,
        message: issue.message,
        ...(issue.params ? { issue: issue.params.issue } : {}),
      }));
      const where = error.validationContext ?? 'request';
      return reply.code(400).send(body('ValidationFailed', `invalid ${where}: ${error.message}`, { in: where, issues }));
    }
    if (isResponseSerializationError(error)) {
      logger.error({ err: error, url: request.url }, 'response did not match its schema');
      return reply.code(500).send(body('InternalError', 'internal error'));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE': {
        const limitBytes = request.routeOptions.bodyLimit;
        return reply
          .code(413)
          .send(
            body('PayloadTooLarge', `the request body is over the ${limitBytes}-byte limit (SKILLSMITH_API_BODY_LIMIT)`, { limitBytes }),
          );
      }
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(body('UnsupportedMediaType', 'send application/json'));
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return reply.code(400).send(body('MalformedJson', error.message));
      default:
        break;
    }
    if (error instanceof SyntaxError && error.statusCode === 400) {
      return reply.code(400).send(body('MalformedJson', `the body is not valid JSON: ${error.message}`));
    }
    if (error instanceof ZodError) {
      return reply.code(400).send(body('ValidationFailed', error.issues[0]?.message ?? 'invalid request', { issues: error.issues }));
    }
    // A 500 SkillsmithError is the server's own failure: answered below like any unexpected error.
    const domainError = error instanceof SkillsmithError && error.httpStatus !== 500 ? error : databaseFailure(error);
    if (domainError) {
      if (domainError.httpStatus === 401) reply.header('www-authenticate', 'Bearer');
      if (domainError.retryAfterSeconds !== undefined) reply.header('retry-after', String(domainError.retryAfterSeconds));
      if (domainError instanceof StorageFull) storageFailures?.note(domainError);
      if (domainError !== error) logger.warn({ method: request.method, url: request.url, code: domainError.code }, domainError.message);
      return reply.code(domainError.httpStatus).send(body(domainError.code, domainError.message, ownDetails(domainError)));
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send(body(error.code ?? error.name, error.message));
    }
    logger.error({ err: error, method: request.method, url: request.url }, 'request failed');
    return reply.code(500).send(body('InternalError', 'internal error'));
  };
}

export function notFoundBody(method: string, url: string): ErrorBody {
  return body('RouteNotFound', `no route ${method} ${url.split('?')[0]}`);
}
