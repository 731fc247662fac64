// buildApp(): the HTTP API as a Fastify instance, with every dependency passed in. The process entry
// (src/service.ts) decides what to pass; tests pass their own database and clock.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyServerOptions, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { SerializerSelector, type Serializer, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { createCpuPool, defaultThreadCount, type CpuPool } from '../cpu/pool.ts';
import type { Database } from '../db/database.ts';
import { AppError } from '../domain/errors.ts';
import { KEY_REVOKED_CHANNEL, KeyVerifier, LastUsedRecorder } from '../domain/keys/keys.ts';
import cookie from '@fastify/cookie';
import { authenticate } from './auth.ts';
import { refuseForeignHosts } from './hosts.ts';
import { Metrics } from '../observability/metrics.ts';
import { auditRefusals, idempotency } from './mutation.ts';
import { sendProblem, toAppError } from './problem.ts';
import { Problem } from '../schemas/index.ts';
import { forSerializer } from './serializer-schema.ts';
import apiDocs from './routes/docs.ts';
import serviceRoutes from './routes/service.ts';
import callRoutes from './routes/v1/calls.ts';
import draftRoutes from './routes/v1/drafts.ts';
import leadImportRoutes from './routes/v1/lead-import.ts';
import leadRoutes from './routes/v1/leads.ts';
import replyRoutes from './routes/v1/replies.ts';
import suppressionRoutes from './routes/v1/suppressions.ts';
import unsubscribeRoutes from './routes/unsubscribe.ts';
import analyticsRoutes from './routes/v1/analytics.ts';
import runEventRoutes, { RunEvent } from './routes/v1/run-events.ts';
import runRoutes from './routes/v1/runs.ts';
import webhookRoutes from './routes/v1/webhooks.ts';
import sequenceRoutes from './routes/v1/sequences.ts';
import touchRoutes from './routes/v1/touches.ts';
import { RunEventHub } from './run-event-hub.ts';
import security from './security.ts';
import approvalRoutes from './routes/ui/approvals.ts';
import batchRoutes from './routes/ui/batches.ts';
import mailSettingsRoutes from './routes/ui/mail-settings.ts';
import sendingSettingsRoutes from './routes/ui/sending-settings.ts';
import outboxRoutes from './routes/v1/outbox.ts';
import mailboxCheckRoutes from './routes/ui/mailbox-checks.ts';
import mailCheckRoutes from './routes/ui/mail-checks.ts';
import memberRoutes from './routes/ui/members.ts';
import passwordResetRoutes from './routes/ui/password-reset.ts';
import profileRoutes from './routes/ui/profile.ts';
import replySettingsRoutes from './routes/ui/reply-settings.ts';
import auditRoutes from './routes/ui/audit.ts';
import keyRoutes from './routes/ui/keys.ts';
import sessionRoutes from './routes/ui/session.ts';
import usageRoutes from './routes/ui/usage.ts';
import webApp, { appPageSender, isAppPath } from './routes/ui/web-app.ts';
import { bodyValidator, textValidator } from '../domain/validators.ts';
import type { AppDeps, AppInstance, RouteEntry } from './app-instance.ts';
import { loadSecretBox } from '../domain/secret-box.ts';

function once<T>(make: () => T): () => T {
  let made: { value: T } | null = null;
  return () => (made ??= { value: make() }).value;
}

export const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// Query strings and path parameters arrive as text and are coerced to their types; bodies are JSON and are not:
// `{"name": 42}` is refused rather than turned into "42". Unknown body fields are refused, never dropped.
let processValidators: { body: Ajv; text: Ajv } | null = null;
function validators() {
  processValidators ??= { body: bodyValidator(), text: textValidator() };
  return processValidators;
}

// Compiling every route's schemas (Ajv's validators, fast-json-stringify's serializers) would be most of the CPU a
// server's start takes, for routes of which a server may serve a few; so each is compiled when it is first used, a few
// milliseconds of that request's. Every app built in the process
// (tests build one for each database) gets the same schemas, though many as new objects (a route's querystring or
// `dataOf(…)` is made where the route is), so what was compiled is kept for the process by what the schema says, not
// by which object holds it.
const compiledValidators = new Map<string, TextValidator>();
/** What is still to compile: `compileSchemas` compiles it all at once. */
const uncompiled = new Set<() => unknown>();

/** Compiles now every schema of the apps built so far; a test's way to find one that would fail on first use. */
export function compileSchemas(): number {
  const count = uncompiled.size;
  for (const compile of [...uncompiled]) compile();
  return count;
}

/** `compile()` on first use, once. */
function onFirstUse<T>(compile: () => T): () => T {
  let compiled: T | undefined;
  const get = () => {
    if (compiled === undefined) {
      compiled = compile();
      uncompiled.delete(get);
    }
    return compiled;
  };
  uncompiled.add(get);
  return get;
}

function compileValidator(schema: unknown, httpPart: string | undefined): TextValidator {
  const body = httpPart === 'body';
  const key = `${body ? 'body' : 'text'}\n${JSON.stringify(schema)}`;
  let validate = compiledValidators.get(key);
  if (!validate) {
    const compiled = onFirstUse(() => {
      const ajv = validators();
      return body ? ajv.body.compile(schema as object) : withDecimalIntegers(schema, ajv.text.compile(schema as object));
    });
    // Fastify reads a failed validation's errors from the function it was given, and only then.
    const validated: TextValidator = (data) => {
      const validate = compiled();
      if (validate(data)) return true;
      validated.errors = validate.errors;
      return false;
    };
    compiledValidators.set(key, (validate = validated));
  }
  return validate;
}

// A serializer may refer to the shared schemas (Problem, RunEvent) and depends on the serializer options: those of
// the last app built are kept with what was compiled for them.
const serializerFactory = SerializerSelector();
let processSerializers: { context: string; compiled: Map<string, Serializer> } | null = null;
const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  // Made when a route's serializer is first compiled: an app whose routes an earlier app compiled needs none.
  const compile = once(() => serializerFactory(externalSchemas && forSerializer(externalSchemas), options));
  const context = JSON.stringify([externalSchemas ?? {}, options ?? {}]);
  if (processSerializers?.context !== context) processSerializers = { context, compiled: new Map() };
  const { compiled } = processSerializers;
  return (route) => {
    if (typeof route.schema !== 'object' || route.schema === null) return compile()(route);
    const key = JSON.stringify(route.schema);
    let serialize = compiled.get(key);
    if (!serialize) {
      const built = onFirstUse(() => compile()({ ...route, schema: forSerializer(route.schema) }));
      compiled.set(key, (serialize = (data) => built()(data)));
    }
    return serialize;
  };
};

// Ajv turns any text that JavaScript reads as a whole number into an integer: "0x10", "1e1", " 5", "5." and
// "1e999" (Infinity) among them. In a query an integer is written in decimal digits, and nothing else is one.
const DECIMAL_INTEGER = /^-?[0-9]+$/;

type TextValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

function withDecimalIntegers(schema: unknown, validate: ValidateFunction): TextValidator {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => properties[name]?.type === 'integer');
  if (integers.length === 0) return validate;
  const validated: TextValidator = (data) => {
    const values = (data ?? {}) as Record<string, unknown>;
    const wrong = integers.filter((name) => [values[name]].flat().some((v) => typeof v === 'string' && !DECIMAL_INTEGER.test(v)));
    const valid = validate(data);
    const own: ErrorObject[] = wrong.map((name) => ({
      instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, keyword: 'type', params: { type: 'integer' },
      message: 'must be an integer written in decimal digits',
    }));
    const others = (validate.errors ?? []).filter((e) => !wrong.some((name) => e.instancePath === `/${name}`));
    validated.errors = own.length > 0 || !valid ? [...own, ...others] : null;
    return valid && own.length === 0;
  };
  return validated;
}

export interface BuildOptions {
  logger?: FastifyBaseLogger;
}

/**
 * The app's dependencies. Without `cpu`, a pool of its own is made; it starts no thread until a task needs one, and
 * lets idle threads go.
 */
export function createDeps(config: Config, database: Database, clock: Clock, onError: (error: unknown) => void, cpu?: CpuPool): AppDeps {
  return {
    config,
    database,
    db: database.db,
    clock,
    keys: new KeyVerifier(database.db),
    lastUsed: new LastUsedRecorder(database.db, { onError }),
    metrics: new Metrics(),
    runEvents: new RunEventHub(),
    cpu: cpu ?? createCpuPool({ budgetMs: config.cpuBudgetMs, threads: config.cpuThreads ?? defaultThreadCount(true) }),
    secrets: once(() => loadSecretBox(config.secretsKey, config.dataDir)),
  };
}

export async function buildApp(deps: AppDeps, options: BuildOptions = {}): Promise<AppInstance> {
  const trustProxy: FastifyServerOptions['trustProxy'] = deps.config.trustProxy;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: { level: deps.config.logLevel } }),
    // One line per request is written by the onResponse hook below, with the key and the route.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
    schemaController: { compilersFactory: { buildSerializer } },
    trustProxy,
    // What the router refuses before any hook runs is answered in the same problem shape as everything else.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      const appError = error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new AppError('not_found', 'There is no such resource: a part of the path is far longer than any identifier.')
        : new AppError('invalid_request', 'The URL is not valid: check its percent-encoding.');
      return sendProblem(request, reply, appError);
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as AppInstance;

  app.decorate('deps', deps);
  app.decorate('routeTable', [] as RouteEntry[]);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      app.routeTable.push({ method, url: route.url, scope: route.config?.scope ?? null, access: route.config?.access ?? null });
    }
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('audited', false);
  app.decorateRequest('idempotency', null);

  app.setValidatorCompiler(({ schema, httpPart }) => compileValidator(schema, httpPart));
  // A body whose fields are all optional may be left out altogether (POST …/approve, …/reject, PATCH …): it is
  // then {}, for validation and for the handler alike. A body that is there is validated as sent: `null` is not {}.
  app.addHook('preValidation', async (request) => {
    if (request.body !== undefined) return;
    const body = request.routeOptions.schema?.body as { required?: unknown[] } | undefined;
    if (body && !body.required?.length) request.body = {};
  });
  app.removeContentTypeParser('text/plain');
  app.addSchema(Problem);
  app.addSchema(RunEvent);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Cookies are read before authentication: a signed-in person's session is one.
  await app.register(cookie, { hook: 'onRequest' });
  await app.register(security); // before authentication, so its headers are on a 401 too; it limits after it
  app.addHook('onRequest', refuseForeignHosts(deps.config));
  app.addHook('onRequest', authenticate(deps));
  const claimIdempotencyKey = idempotency(deps);
  app.addHook('preHandler', async (request, reply) => {
    if (request.method === 'POST' && request.principal) return claimIdempotencyKey(request, reply);
  });
  app.addHook('onSend', auditRefusals(deps));
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.observeRequest(request, reply);
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    request.log[level]({
      method: request.method,
      url: request.url,
      route: request.routeOptions.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      keyId: request.principal?.keyId,
    }, 'request');
  });

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    if (appError.code === 'internal') request.log.error({ err: error }, 'request failed');
    if (appError.code === 'unavailable') request.log.warn({ err: error }, 'database unavailable');
    return sendProblem(request, reply, appError);
  });
  // A page's path that is not one of the app's gets the app, whose router shows its not-found page with a 404.
  const appPages = appPageSender();
  app.setNotFoundHandler((request, reply) => isAppPath(request) ? appPages.send(reply, 404) :
    sendProblem(request, reply, new AppError('not_found', `There is no ${request.method} ${request.url.split('?')[0]} endpoint.`)));

  // A key revoked by any process is forgotten by this one's cache as soon as the revocation commits.
  let stopListening: (() => Promise<void>) | null = null;
  app.addHook('onReady', async () => {
    stopListening = await deps.database.listen(KEY_REVOKED_CHANNEL, (digest) => deps.keys.forget(digest));
    await deps.runEvents.start(deps.database, deps.clock);
  });
  app.addHook('preClose', async () => {
    // Open event streams end now, so that closing does not wait for them.
    await deps.runEvents.close();
  });
  app.addHook('onClose', async () => {
    await stopListening?.();
  });

  await app.register(apiDocs);
  await app.register(serviceRoutes);
  await app.register(leadRoutes);
  await app.register(leadImportRoutes);
  await app.register(callRoutes);
  await app.register(runRoutes);
  await app.register(draftRoutes);
  await app.register(runEventRoutes);
  await app.register(replyRoutes);
  await app.register(suppressionRoutes);
  await app.register(unsubscribeRoutes);
  await app.register(analyticsRoutes);
  await app.register(webhookRoutes);
  await app.register(sequenceRoutes);
  await app.register(touchRoutes);
  await app.register(sessionRoutes);
  await app.register(keyRoutes);
  await app.register(memberRoutes);
  await app.register(profileRoutes);
  await app.register(replySettingsRoutes);
  await app.register(passwordResetRoutes);
  await app.register(auditRoutes);
  await app.register(usageRoutes);
  await app.register(batchRoutes);
  await app.register(mailSettingsRoutes);
  await app.register(sendingSettingsRoutes);
  await app.register(outboxRoutes);
  await app.register(mailboxCheckRoutes);
  await app.register(mailCheckRoutes);
  await app.register(approvalRoutes);
  await app.register(webApp, { pages: appPages });
  return app;
}
