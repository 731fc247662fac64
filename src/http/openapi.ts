// The OpenAPI documents. @fastify/swagger writes one document from the route schemas; `finishDocument` then adds
// what the schemas cannot say, by rule, so that a new route gets it without anyone remembering: the headers each
// answer carries, the request headers a route reads, which bodies may be left out and which query parameters the
// server fills in. Two documents come of it:
// - the internal one (`app.swagger()`), every route the app has, the web UI's `/ui/api/*` included: the UI's types
//   (scripts/gen-api-types.ts) and the fuzzer are made from it; it is never served;
// - the public one (`publicDocument`), served at /api/v1/openapi.json and /docs: the API for API users, without the
//   web UI's cookie routes or the schemas only they use (DESIGN §9).
import { isApiPath, isRateLimited } from './security.ts';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT } from '../domain/webhooks/events.ts';

type Json = Record<string, unknown>;
type Operation = Json & {
  security?: Array<Record<string, string[]>>;
  parameters?: Json[];
  requestBody?: Json & { required?: boolean; content?: Record<string, { schema?: Json }> };
  responses?: Record<string, Json & { headers?: Record<string, Json>; content?: Record<string, unknown> }>;
};
export interface OpenApiDocument extends Json {
  paths: Record<string, Record<string, Operation>>;
  components: Json & { schemas?: Record<string, Json>; headers?: Record<string, Json>; parameters?: Record<string, Json> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The paths of the web UI's own API: signed-in people's cookie routes, never part of the public API. */
export const isUiPath = (path: string): boolean => path.startsWith('/ui/');

/** Response headers, written once and referenced by every answer that carries them. */
const HEADERS: Record<string, Json> = {
  'Access-Control-Allow-Origin': {
    description: '`*`: a web page of any origin may call the API with a key. Cookies are never sent nor accepted cross-origin.',
    schema: { type: 'string', enum: ['*'], maxLength: 1 },
  },
  'X-Request-Id': {
    description: 'The id of this request: the `X-Request-Id` the client sent (1 to 128 letters, digits and `._:-`) or one made '
      + 'for it. Problems repeat it as `requestId`; quote it when asking for help.',
    schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' },
  },
  RateLimit: {
    description: 'The quota left in the current window (IETF RateLimit header fields): `"default";r=REMAINING;t=SECONDS`.',
    schema: { type: 'string', maxLength: 100, pattern: '^"[a-z]+";r=[0-9]+;t=[0-9]+$' },
  },
  'RateLimit-Policy': {
    description: 'The quota policy: `"default";q=REQUESTS;w=60`, so many requests a minute for this key, user or address.',
    schema: { type: 'string', maxLength: 100, pattern: '^"[a-z]+";q=[0-9]+;w=[0-9]+$' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400 },
  },
  'WWW-Authenticate': {
    description: 'How to authenticate: `Bearer realm="leadrun"`.',
    schema: { type: 'string', maxLength: 100, enum: ['Bearer realm="leadrun"'] },
  },
  Location: {
    description: 'Where the created resource (or the batch of runs) can be read, as a path on this server.',
    schema: { type: 'string', format: 'uri-reference', maxLength: 2048 },
  },
  Link: {
    description: 'The next page, when there is one: `<PATH?…&cursor=…>; rel="next"`, with the same filters and limit. '
      + 'Without it, this was the last page.',
    schema: { type: 'string', maxLength: 4096 },
  },
  'Idempotent-Replayed': {
    description: '`true` when this answer is the stored answer to an earlier request with the same `Idempotency-Key`: '
      + 'nothing was done again.',
    schema: { type: 'string', enum: ['true'], maxLength: 4 },
  },
};

/** Request headers, written once and referenced by every operation that reads them. */
const PARAMETERS: Record<string, Json> = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'Makes the POST safe to retry: a second request with the same key and the same body within 24 hours gets the '
      + 'first answer again (with `Idempotent-Replayed: true`) and does nothing; the same key with another body is 422, '
      + 'and 409 while the first is still in flight. 1 to 255 visible ASCII characters; a UUID is a good choice.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  },
  LastEventId: {
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description: 'Resume after this event: the `id` of the last event seen (the query parameter `after` wins when both are given).',
    schema: { type: 'string', minLength: 1, maxLength: 16, pattern: '^[0-9]+$' },
  },
};

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/** The path of a document's template as Fastify writes it: `/api/v1/runs/{id}` → `/api/v1/runs/:id`. */
const routeUrlOf = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** The response with these headers too; a copy, since one response object may be shared by several answers. */
function withHeaders<T extends { headers?: Record<string, Json> }>(response: T, names: string[]): T {
  const headers = { ...response.headers };
  for (const name of names) headers[name] ??= headerRef(name);
  return { ...response, headers };
}

function addParameter(operation: Operation, name: string): void {
  const ref = parameterRef(name);
  if (!operation.parameters?.some((p) => p.$ref === ref.$ref)) operation.parameters = [...(operation.parameters ?? []), ref];
}

/** What the schemas cannot say, added to every operation by the rules the server follows. */
function finishOperation(path: string, method: string, operation: Operation): void {
  const keyed = (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
  const limited = isRateLimited(routeUrlOf(path));
  const lists = operation.parameters?.some((p) => p.in === 'query' && p.name === 'cursor') ?? false;
  const streams = Object.values(operation.responses ?? {}).some((r) => r.content && 'text/event-stream' in r.content);

  // A query parameter with a default is filled in by the server when it is left out: it is not required, whatever
  // the TypeBox type (which is that of the value the handler sees) says.
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === 'query' && (parameter.schema as Json | undefined)?.default !== undefined) parameter.required = false;
  }
  // A body whose fields are all optional may be left out (src/http/app.ts reads it as {}): unless {} is itself refused.
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (operation.requestBody && body && !(body.required as unknown[] | undefined)?.length && body.minProperties === undefined && body.type === 'object') {
    operation.requestBody.required = false;
  }
  if (method === 'post' && keyed) addParameter(operation, 'IdempotencyKey');
  if (streams) addParameter(operation, 'LastEventId');
  // Any route can fail unexpectedly; the answer is then a problem like any other, with its requestId to quote.
  operation.responses = {
    ...operation.responses,
    500: operation.responses?.['500'] ?? {
      description: 'Something failed on the server (`internal`); quote `requestId` when asking for help.',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    },
  };

  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const code = Number(status);
    const names = ['X-Request-Id'];
    if (isApiPath(path)) names.push('Access-Control-Allow-Origin');
    // The rate limit counts a request once it is authenticated and allowed (src/http/security.ts): a 401 or 403 is
    // refused before it is counted and carries no quota.
    if (limited && code !== 401 && code !== 403 && code < 500) names.push('RateLimit', 'RateLimit-Policy');
    if (code === 429 || code === 503) names.push('Retry-After');
    if (code === 401) names.push('WWW-Authenticate');
    if (method === 'post' && (code === 201 || code === 202)) names.push('Location');
    if (method === 'get' && lists && code === 200) names.push('Link');
    if (method === 'post' && keyed && code >= 200 && code < 300) names.push('Idempotent-Replayed');
    operation.responses[status] = withHeaders(response, names);
  }
}

const WEBHOOK_HEADERS: Json[] = [
  { name: 'webhook-id', description: 'The event\'s id: the same on every retry and replay of it, to deduplicate by.' },
  { name: 'webhook-timestamp', description: 'When this attempt was signed, in Unix seconds: refuse one far from your clock.' },
  { name: 'webhook-signature', description: 'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret that signs (two during a roll-over).' },
].map((header) => ({ ...header, in: 'header', required: true, schema: { type: 'string', maxLength: 1000 } }));

/** What an event's `data` is: the object as the API answers it, or what is left of it. */
function webhookData(type: string): Json {
  if (type === 'lead.deleted') {
    return { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string', format: 'uuid', maxLength: 36 } } };
  }
  if (type === WEBHOOK_TEST_EVENT) {
    return {
      type: 'object', required: ['endpointId', 'message'], additionalProperties: false,
      properties: { endpointId: { type: 'string', format: 'uuid', maxLength: 36 }, message: { type: 'string', maxLength: 200 } },
    };
  }
  if (type.startsWith('recipient.')) return { $ref: '#/components/schemas/Suppression' };
  return { $ref: type.startsWith('lead.') ? '#/components/schemas/Lead' : '#/components/schemas/Run' };
}

/**
 * The events leadrun POSTs to webhook endpoints (DESIGN §9), as the document's `webhooks`: one operation per event
 * type, signed as Standard Webhooks says.
 */
function webhookSection(): Json {
  const camel = (type: string) => type.split(/[._]/).map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
  return Object.fromEntries([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT].map((type) => [type, {
    post: {
      operationId: `on${camel(type)}`,
      summary: `The ${type} event`,
      description: type === WEBHOOK_TEST_EVENT
        ? 'Sent to one endpoint when "send test event" is asked for, whatever events it wants.'
        : `Sent to every enabled endpoint that wants \`${type}\` (or every event), at least once, in order per run.`,
      tags: ['Webhooks'],
      security: [],
      parameters: WEBHOOK_HEADERS,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object', required: ['type', 'timestamp', 'data'], additionalProperties: false,
              properties: {
                type: { type: 'string', enum: [type] },
                timestamp: { type: 'string', format: 'date-time', maxLength: 27, description: 'When it happened.' },
                data: webhookData(type),
              },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Any 2xx answer within 10 s acknowledges the event; anything else is retried after about 5 s, 1 min, 10 min, 1 h, 6 h and 24 h.' },
      },
    },
  }]));
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A server on a loopback name (PUBLIC_URL left at its default, `http://localhost:PORT`) as `/`: the server that
 * serves the document, wherever it is reached from. Its address would be true of this machine alone, and over plain
 * http, so linters rightly object to it (Redocly's no-server-example.com, OWASP's no-server-http): a fresh
 * `npm start` would serve a document that fails the checks the README promises it passes. `/` is the same server to
 * anyone who read the document from it (OpenAPI resolves a relative server URL against the document's own).
 */
function localServer(server: Json): Json {
  let url: URL;
  try {
    url = new URL(String(server.url));
  } catch {
    return server;
  }
  if (!LOOPBACK_HOSTS.has(url.hostname) && !url.hostname.startsWith('127.')) return server;
  return {
    ...server,
    url: '/',
    description: `This server, for local use (PUBLIC_URL ${url.origin} is a loopback address): the one that `
      + 'serves this document.',
  };
}

/** Completes the document @fastify/swagger wrote from the route schemas (its `transformObject`). */
export function finishDocument<T extends OpenApiDocument>(document: T): T {
  (document as Json).webhooks = { ...webhookSection(), ...(document as Json).webhooks as Json | undefined };
  // PUBLIC_URL is where API users reach this installation: a server for them, not an internal one.
  (document as Json).servers = (document.servers as Json[] | undefined)
    ?.map((server) => ({ ...localServer(server), 'x-internal': false }));
  document.components.headers = { ...document.components.headers, ...HEADERS };
  document.components.parameters = { ...document.components.parameters, ...PARAMETERS };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      if (item[method]) finishOperation(path, method, item[method]);
    }
  }
  return document;
}

/** Every `$ref` target reachable from `value`. */
function refsOf(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) refsOf(item, found);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.add(item);
      else refsOf(item, found);
    }
  }
}

/**
 * The document for API users: the internal one without the web UI's routes, and without the components only those
 * routes used (a component no operation reaches is noise to a reader, and a lint warning).
 */
export function publicDocument(internal: OpenApiDocument): OpenApiDocument {
  const document = structuredClone(internal);
  document.paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => !isUiPath(path)));
  // Whatever is outside the components (paths, and webhooks when there are some) reaches components.
  const reached = new Set<string>();
  refsOf({ ...document, components: undefined }, reached);
  // Components reach further components: follow them until nothing new turns up.
  for (let size = -1; size !== reached.size;) {
    size = reached.size;
    for (const ref of [...reached]) {
      const [, , kind, name] = ref.split('/');
      refsOf((document.components as Record<string, Record<string, unknown> | undefined>)[kind!]?.[name!], reached);
    }
  }
  for (const kind of ['schemas', 'headers', 'parameters', 'responses'] as const) {
    const components = document.components[kind] as Record<string, Json> | undefined;
    if (!components) continue;
    document.components[kind] = Object.fromEntries(Object.entries(components).filter(([name]) => reached.has(`#/components/${kind}/${name}`)));
  }
  return document;
}
