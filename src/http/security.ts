// The edge of the HTTP API as one plugin: security headers (helmet, with a Content-Security-Policy), the CORS
// policy of /api/v1, rate limits per API key, per signed-in user or per client address (counted in memory, or in
// Redis shared by every process when REDIS_URL is set), and the refusal of input the database cannot store.
// docs/SECURITY.md says why each is as it is.
//
// Registered before authentication, so that its headers are on every answer, 401 included (a browser hides a
// cross-origin 401 that lacks Access-Control-Allow-Origin). The rate limit runs in preParsing, which comes after
// every onRequest hook: it is keyed by the principal that authentication found, a bad key is answered 401 before
// it is counted, and a limited client's body is never read.
import fp from 'fastify-plugin';
import helmet from 'helmet';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from './app-instance.ts';
import { AppError } from '../domain/errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Redis in which every process counts together (REDIS_URL), or null: each process counts on its own. */
    redis: Redis | null;
  }
}

const WINDOW_MS = 60_000;
/** The name of the one quota policy, as the RateLimit and RateLimit-Policy headers give it. */
const POLICY = 'default';
/** Routes a load balancer or Prometheus calls often, from one address, and which cost nothing: never limited. */
const UNLIMITED = new Set(['/healthz', '/readyz', '/metrics']);

/** Whether requests to this route (as Fastify writes it: `/api/v1/runs/:id`) count against the rate limit. */
export const isRateLimited = (routeUrl: string): boolean => !UNLIMITED.has(routeUrl);

const API_PREFIX = '/api/v1';
const CORS_ALLOW_METHODS = 'GET, HEAD, POST, PATCH, DELETE';
const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-Request-Id, Last-Event-ID';
const CORS_EXPOSE_HEADERS = [
  'Location', 'Link', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id', 'Idempotent-Replayed', 'WWW-Authenticate',
].join(', ');
const CORS_MAX_AGE_SECONDS = '7200';

/**
 * The Content-Security-Policy. The UI is a same-origin app with its own script and style files: nothing inline,
 * nothing from elsewhere. Over plain http (npm start, a machine on the local network) upgrading requests to https
 * would break every asset, so upgrade-insecure-requests comes only with an https PUBLIC_URL.
 */
function cspDirectives(https: boolean): Record<string, string[]> {
  return {
    defaultSrc: ["'self'"],
    baseUri: ["'self'"],
    connectSrc: ["'self'"],
    fontSrc: ["'self'", 'data:'],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    imgSrc: ["'self'", 'data:'],
    objectSrc: ["'none'"],
    scriptSrc: ["'self'"],
    scriptSrcAttr: ["'none'"],
    styleSrc: ["'self'"],
    ...(https ? { upgradeInsecureRequests: [] } : {}),
  };
}

/**
 * The policy of /docs, which @fastify/swagger-ui sets on its own routes (its `staticCSP`): the app's, and inline
 * styles, which Swagger UI applies. Its built-in policy would upgrade requests to https even over plain http.
 */
export function docsContentSecurityPolicy(publicUrl: string): string {
  const directives = cspDirectives(publicUrl.startsWith('https:'));
  directives.styleSrc = ["'self'", "'unsafe-inline'"];
  return Object.entries(directives)
    .map(([name, values]) => [name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), ...values].join(' '))
    .join('; ');
}

/** Who a request is counted against: its API key, the signed-in user, or else the client's address. */
export function rateLimitKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.source === 'api' && principal.keyId) return `key:${principal.keyId}`;
  if (principal?.source === 'ui' && principal.userId) return `user:${principal.userId}`;
  return `ip:${normalizeIP(request.ip)}`;
}

/** Whether a request (or a route's path) is of the API, /api/v1: what CORS allows from any origin. */
export function isApiPath(url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
}

/**
 * /api/v1 is called with a bearer key, never with cookies, so any origin may call it: every answer says
 * `Access-Control-Allow-Origin: *` and never `Access-Control-Allow-Credentials` (a browser then refuses to send
 * or expose a cookie-authenticated cross-origin request). Preflights are answered here, before authentication,
 * since a browser sends them without the key. Other paths (the UI, /docs) are same-origin only.
 * Headers go on the raw response, so that a hijacked reply (the event stream) carries them too.
 */
function cors(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (!isApiPath(request.url)) return undefined;
  reply.raw.setHeader('access-control-allow-origin', '*');
  if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
    reply.raw.setHeader('access-control-allow-methods', CORS_ALLOW_METHODS);
    reply.raw.setHeader('access-control-allow-headers', CORS_ALLOW_HEADERS);
    reply.raw.setHeader('access-control-max-age', CORS_MAX_AGE_SECONDS);
    return reply.code(204).send();
  }
  reply.raw.setHeader('access-control-expose-headers', CORS_EXPOSE_HEADERS);
  return undefined;
}

/**
 * The first string (or key) holding U+0000 in a parsed body, query or path, as a field path ("name", "a.0.b").
 * PostgreSQL text and jsonb cannot store that character: let through, it would fail the query with a 500.
 */
export function fieldWithNul(value: unknown): string | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  // Bounded: nothing the API accepts is deeper or wider, and what is refuses validation anyway.
  for (let seen = 0; stack.length > 0 && seen < 100_000; seen++) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return path || '(body)';
      continue;
    }
    // Raw bytes (a lead import's file) are not walked byte by byte: their reader reports a NUL in its own rows.
    if (current === null || typeof current !== 'object' || ArrayBuffer.isView(current)) continue;
    for (const [key, child] of Object.entries(current)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return childPath;
      stack.push({ value: child, path: childPath });
    }
  }
  return null;
}

function refuseNul(request: FastifyRequest): void {
  const params = fieldWithNul(request.params);
  if (params) throw new AppError('not_found', `There is no ${request.method} ${request.url.split('?', 1)[0]} resource.`);
  for (const [part, value] of [['query', request.query], ['body', request.body]] as const) {
    const field = fieldWithNul(value);
    if (field) {
      const name = part === 'query' && field === '(body)' ? 'query' : field;
      throw new AppError('invalid_request', `The request is invalid: ${name} must not contain the NUL character (U+0000).`, {
        errors: [{ field: name, message: 'must not contain the NUL character (U+0000)' }],
      });
    }
  }
}

/**
 * Redis for the shared counters: never holds a request waiting while it is away (the limit then fails open).
 * The client is loaded only when REDIS_URL is set.
 */
async function connectRedis(app: AppInstance, url: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let reachable = true;
  redis.on('error', (error: Error) => {
    if (!reachable) return;
    reachable = false;
    app.log.warn({ err: { message: error.message } }, 'the rate-limit store (Redis) cannot be reached; requests are not limited until it is back');
  });
  redis.on('ready', () => {
    if (reachable) return;
    reachable = true;
    app.log.info('the rate-limit store (Redis) is reachable again');
  });
  return redis;
}

async function security(app: AppInstance): Promise<void> {
  const { config } = app.deps;
  const https = config.publicUrl.startsWith('https:');

  // Built once: helmet's middleware only sets the headers its options gave.
  const securityHeaders = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: cspDirectives(https) },
    frameguard: { action: 'deny' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  });
  const headersSet = (error?: unknown) => {
    if (error) throw error;
  };
  app.addHook('onRequest', (request, reply, done) => {
    securityHeaders(request.raw, reply.raw, headersSet);
    if (cors(request, reply)) return; // a preflight, answered
    done();
  });

  app.addHook('preValidation', async (request) => refuseNul(request));

  const redis = config.redisUrl ? await connectRedis(app, config.redisUrl) : null;
  app.decorate('redis', redis);
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimitPerMinute,
    timeWindow: WINDOW_MS,
    keyGenerator: rateLimitKey,
    ...(redis ? { redis, nameSpace: `${config.redisKeyPrefix}rate-limit:` } : { cache: 100_000 }),
  });
  if (redis) {
    app.addHook('onReady', async () => {
      await redis.connect().catch(() => { /* logged by the error listener; ioredis keeps reconnecting */ });
    });
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  }

  const limit = app.createRateLimit();
  let failing = false;
  app.addHook('preParsing', async (request, reply, payload) => {
    if (!isRateLimited(request.routeOptions.url ?? '')) return payload;
    let state: Awaited<ReturnType<typeof limit>>;
    try {
      state = await limit(request);
      failing = false;
    } catch (error) {
      // The store is away: answer rather than refuse (or hang), and say so once.
      if (!failing) request.log.warn({ err: error }, 'rate limit not applied: the store failed');
      failing = true;
      return payload;
    }
    if (state.isAllowed) return payload;
    const resetSeconds = Math.max(1, state.ttlInSeconds);
    // On the raw response, like the CORS headers, so that the event stream (a hijacked reply) has them too.
    reply.raw.setHeader('ratelimit-policy', `"${POLICY}";q=${state.max};w=${WINDOW_MS / 1000}`);
    reply.raw.setHeader('ratelimit', `"${POLICY}";r=${state.remaining};t=${resetSeconds}`);
    if (state.isExceeded) {
      reply.header('retry-after', String(resetSeconds));
      const who = state.key.startsWith('key:') ? 'for this API key' : state.key.startsWith('user:') ? 'for this user' : 'for this address';
      throw new AppError('rate_limited', `Too many requests: at most ${state.max} a minute ${who}. Retry in ${resetSeconds} s.`);
    }
    return payload;
  });
}

export default fp(security, { name: 'security' });
