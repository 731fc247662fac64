// The edge of the HTTP API as one plugin: security headers (helmet, with a Content-Security-Policy), the CORS
// policy of /api/v1, and rate limits per API key, per signed-in user or per client address, counted in memory or
// in Redis shared by every process (REDIS_URL). docs/SECURITY.md says why each is as it is.
//
// Registered before authentication, so that its headers are on every answer, 401 included (a browser hides a
// cross-origin 401 that lacks Access-Control-Allow-Origin). The rate limit runs in preParsing, which comes after
// every onRequest hook: it is keyed by the principal that authentication found, a bad key is answered 401 before
// it is counted, and a limited client's body is never read.
import fp from 'fastify-plugin';
import helmet from '@fastify/helmet';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from './app.ts';
import { AppError } from '../domain/errors.ts';

const WINDOW_MS = 60_000;
/** The name of the one quota policy, as the RateLimit and RateLimit-Policy headers give it. */
const POLICY = 'default';
/** Routes a load balancer or Prometheus calls often, from one address, and which cost nothing: never limited. */
const UNLIMITED = new Set(['/healthz', '/readyz', '/metrics']);

const API_PREFIX = '/api/v1';
const CORS_ALLOW_METHODS = 'GET, HEAD, POST, PATCH, DELETE';
const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-Request-Id, Last-Event-ID';
const CORS_EXPOSE_HEADERS = [
  'Location', 'Link', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id', 'Idempotent-Replayed', 'WWW-Authenticate',
].join(', ');
const CORS_MAX_AGE_SECONDS = '7200';

/** Who a request is counted against: its API key, the signed-in user, or else the client's address. */
export function rateLimitKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.source === 'api' && principal.keyId) return `key:${principal.keyId}`;
  if (principal?.source === 'ui' && principal.userId) return `user:${principal.userId}`;
  return `ip:${normalizeIP(request.ip)}`;
}

function isApiPath(url: string): boolean {
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

/** Redis for the shared counters: never holds a request waiting while it is away (the limit then fails open). */
function connectRedis(app: AppInstance, url: string): Redis {
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

  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      // The UI is a same-origin app with its own script and style files: nothing inline, nothing from elsewhere.
      // /docs sets its own policy (@fastify/swagger-ui, staticCSP), which replaces this one there.
      directives: {
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
        // Over plain http (npm start, a machine on the local network) upgrading would break every asset.
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  });

  app.addHook('onRequest', async (request, reply) => cors(request, reply));

  const redis = config.redisUrl ? connectRedis(app, config.redisUrl) : null;
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
    if (UNLIMITED.has(request.routeOptions.url ?? '')) return payload;
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
    reply.header('ratelimit-policy', `"${POLICY}";q=${state.max};w=${WINDOW_MS / 1000}`);
    reply.header('ratelimit', `"${POLICY}";r=${state.remaining};t=${resetSeconds}`);
    if (state.isExceeded) {
      reply.header('retry-after', String(resetSeconds));
      const who = state.key.startsWith('key:') ? 'for this API key' : state.key.startsWith('user:') ? 'for this user' : 'for this address';
      throw new AppError('rate_limited', `Too many requests: at most ${state.max} a minute ${who}. Retry in ${resetSeconds} s.`);
    }
    return payload;
  });
}

export default fp(security, { name: 'security' });
