// Bearer-key authentication and scopes. Runs in onRequest, before the body is read, so the order of checks is
// always: authenticate (401) → scope (403) → validate (400) → the handler.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';
import type { KeyPrincipal, KeyVerifier, LastUsedRecorder, Scope } from '../domain/keys.ts';
import type { Clock } from '../clock.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; routes without one need no key. */
    scope?: Scope;
    /** The audit action of a mutating route, e.g. `lead.created`. */
    auditAction?: string;
  }
  interface FastifyRequest {
    principal: KeyPrincipal | null;
  }
}

const BEARER = /^Bearer ([^\s]+)$/;

export function authenticate(deps: { keys: KeyVerifier; lastUsed: LastUsedRecorder; clock: Clock }) {
  return async function onRequest(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    const header = request.headers.authorization;
    if (!header) throw new AppError('unauthorized', 'This endpoint needs an API key: send Authorization: Bearer sk_…');
    const match = BEARER.exec(header);
    if (!match?.[1]) throw new AppError('unauthorized', 'The Authorization header must be "Bearer" followed by an API key.');
    const principal = await deps.keys.verify(match[1]);
    if (!principal) throw new AppError('unauthorized', 'The API key is malformed, unknown or revoked.');
    request.principal = principal;
    deps.lastUsed.record(principal.keyId, deps.clock.now());
    if (!principal.scopes.includes(scope)) {
      throw new AppError('insufficient_scope', `This endpoint needs a key with the ${scope} scope.`, { extra: { requiredScope: scope } });
    }
  };
}

/** The principal of an authenticated route; the onRequest hook has made sure there is one. */
export function principalOf(request: FastifyRequest): KeyPrincipal {
  if (!request.principal) throw new AppError('unauthorized', 'This endpoint needs an API key.');
  return request.principal;
}
