// Who is asking: a bearer API key (the REST API) or a person signed in to the web UI (a session cookie). Runs in
// onRequest, before the body is read, so the order of checks is always: authenticate (401) → scope or role (403)
// → validate (400) → the handler.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB, Plan, Role } from '../db/schema.ts';
import { AppError } from '../domain/errors.ts';
import { SCOPES, type KeyVerifier, type LastUsedRecorder, type Scope } from '../domain/keys/keys.ts';
import { csrfTokenMatches, findSession } from '../domain/members/sessions.ts';
import { hostnameOf, isOwnHostname, isOwnOrigin, misdirected } from './hosts.ts';
import type { Kysely } from 'kysely';

/** Who is making a request: an API key (`source: 'api'`) or a person signed in to the UI (`source: 'ui'`). */
export interface Principal {
  source: 'api' | 'ui';
  workspaceId: string;
  scopes: readonly Scope[];
  plan: Plan;
  /** The workspace's admin: runs started with a key are attributed to this user. */
  adminUserId: string | null;
  /** The API key, for `source: 'api'`. */
  keyId: string | null;
  /** The signed-in user, for `source: 'ui'`. */
  userId: string | null;
  role: Role | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route. A signed-in person holds every scope of their workspace. */
    scope?: Scope;
    /** A route of the web UI: who may use it. Only a session reaches these; API keys do not. */
    access?: 'signed-in' | 'admin';
    /** The audit action of a mutating route, e.g. `lead.created`, or how the request's body chooses it. */
    auditAction?: string | ((request: FastifyRequest) => string);
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export const SESSION_COOKIE = 'leadrun_session';

/** Gives the browser its session: HttpOnly, SameSite=Lax, and Secure when leadrun is served over https. */
export function setSessionCookie(reply: FastifyReply, config: Config, token: string, expires: Date): void {
  reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure: config.publicUrl.startsWith('https:'), path: '/', expires });
}
// The scheme is case-insensitive and may be followed by more than one space (RFC 9110 §11.1, §11.4).
const BEARER = /^Bearer +([^\s]+)$/i;
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface AuthDeps {
  db: Kysely<DB>;
  keys: KeyVerifier;
  lastUsed: LastUsedRecorder;
  clock: Clock;
  config: Config;
}

/**
 * A change asked for with a cookie, a sign-in or the first-run setup must come from leadrun's own pages: the Origin
 * (when the browser sends one) names one of leadrun's own hosts (src/http/hosts.ts), never merely the host the
 * request was sent to, which a DNS-rebinding page chooses. Browsers send Origin on every cross-site POST, so a
 * form on another site is refused here.
 */
export function assertSameOrigin(request: FastifyRequest, config: Config): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  if (!isOwnOrigin(config, origin)) throw new AppError('forbidden', 'This request came from another site and was refused.');
}

async function sessionPrincipal(request: FastifyRequest, deps: AuthDeps): Promise<Principal> {
  // A session is the web UI's, which answers only under leadrun's own names.
  if (!isOwnHostname(deps.config, hostnameOf(request.host))) throw misdirected();
  const token = request.cookies[SESSION_COOKIE];
  const session = token ? await findSession(deps.db, token, deps.clock) : null;
  if (!session) throw new AppError('unauthorized', 'Sign in to continue.');
  if (CHANGES.has(request.method)) {
    assertSameOrigin(request, deps.config);
    if (!csrfTokenMatches(session, request.headers['x-csrf-token'])) {
      throw new AppError('forbidden', 'The request is missing its CSRF token; reload the page and try again.');
    }
  }
  return {
    source: 'ui',
    workspaceId: session.workspace.id,
    scopes: SCOPES,
    plan: session.workspace.plan,
    adminUserId: session.workspace.adminUserId,
    keyId: null,
    userId: session.user.id,
    role: session.user.role,
  };
}

async function keyPrincipal(request: FastifyRequest, deps: AuthDeps): Promise<Principal> {
  const header = request.headers.authorization;
  if (!header) throw new AppError('unauthorized', 'This endpoint needs an API key: send Authorization: Bearer sk_…');
  const match = BEARER.exec(header);
  if (!match?.[1]) throw new AppError('unauthorized', 'The Authorization header must be "Bearer" followed by an API key.');
  const key = await deps.keys.verify(match[1]);
  if (!key) throw new AppError('unauthorized', 'The API key is malformed, unknown or revoked.');
  deps.lastUsed.record(key.keyId, deps.clock.now());
  return { source: 'api', ...key, userId: null, role: null };
}

export function authenticate(deps: AuthDeps) {
  return async function onRequest(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const { scope, access } = request.routeOptions.config;
    if (!scope && !access) return;
    // An Authorization header always means a key, even with a cookie present; the UI's own routes take only sessions.
    const useSession = access !== undefined || (request.headers.authorization === undefined && request.cookies[SESSION_COOKIE] !== undefined);
    const principal = useSession ? await sessionPrincipal(request, deps) : await keyPrincipal(request, deps);
    request.principal = principal;
    if (access === 'admin' && principal.role !== 'ADMIN') {
      throw new AppError('forbidden', 'Only workspace admins can do this.');
    }
    if (scope && !principal.scopes.includes(scope)) {
      throw new AppError('insufficient_scope', `This endpoint needs a key with the ${scope} scope.`, { extra: { requiredScope: scope } });
    }
  };
}

/** The principal of an authenticated route; the onRequest hook has made sure there is one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized', 'This endpoint needs an API key.');
  return request.principal;
}
