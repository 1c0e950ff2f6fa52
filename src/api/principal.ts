import type { FastifyRequest } from 'fastify';
import type { Authenticator, Principal } from './auth.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated principal of a scoped route (its tenant is the only tenant the request sees). */
    readonly principal: Principal;
  }
}

const principals = new WeakMap<FastifyRequest, Principal>();

/** `request.principal` (fastify.decorateRequest): set by the hook below; on a route without a scope it throws. */
export const principalDecorator = {
  getter(this: FastifyRequest): Principal {
    const principal = principals.get(this);
    if (!principal) throw new Error('route has no scope: no principal was authenticated');
    return principal;
  },
};

/**
 * The `onRequest` hook: authenticates every scoped route before the body is read, so a bad token
 * or a missing scope is refused before anything is parsed or written.
 */
export function authenticationHook(authenticator: Authenticator) {
  return async (request: FastifyRequest): Promise<void> => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    const principal = authenticator.authenticate(request.headers.authorization);
    authenticator.authorize(principal, scope);
    principals.set(request, principal);
  };
}
