// The API document as API users get it (DESIGN §9): served at /api/v1/openapi.json, it lints with no error and no
// warning under Redocly's `recommended` rules (.redocly.yaml) and Spectral's `spectral:oas` with the OWASP ruleset
// (.spectral.yaml), both as an installation serves it and as a fresh `npm start` on localhost does, and it says what
// generated clients need: operation ids, headers, optional parameters and bodies, a description of every answer, and
// text bodies (CSV, the event stream) as strings. The document does not depend on the database, so one backend is
// enough.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadConfig } from '../../src/config.ts';
import { ERROR_CODES } from '../../src/domain/errors.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks/events.ts';
import { finishDocument, publicDocument, type OpenApiDocument } from '../../src/http/openapi.ts';
import { startTestApp, type TestApp } from '../helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'node_modules/.bin');
// As an installation reached by API users serves it: over https, at its own name. (With the default
// http://localhost:3000, Redocly warns of a localhost server and OWASP refuses plain http: both rightly.)
const PUBLIC_URL = 'https://leads.acme.test';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Finding { rule: string; severity: string; message: string; where: string }

/** Runs a linter's command line; its exit status says only whether it found something, which the findings tell. */
async function run(bin: string, args: string[]): Promise<string> {
  const result = await promisify(execFile)(path.join(BIN, bin), args, {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
    // Neither tool may reach the network: no telemetry, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' },
  }).catch((error: { stdout?: string; stderr?: string; code?: unknown }) => {
    if (typeof error.stdout === 'string' && error.stdout.trim()) return { stdout: error.stdout };
    throw new Error(`${bin} failed (${String(error.code)}): ${error.stderr ?? ''}`);
  });
  return result.stdout;
}

async function redocly(file: string): Promise<Finding[]> {
  const out = JSON.parse(await run('redocly', ['lint', file, '--config', path.join(ROOT, '.redocly.yaml'), '--format', 'json']));
  return (out.problems as Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }>)
    .map((p) => ({ rule: p.ruleId, severity: p.severity, message: p.message, where: p.location?.[0]?.pointer ?? '' }));
}

const SPECTRAL_SEVERITY = ['error', 'warn', 'info', 'hint'];

async function spectral(file: string): Promise<Finding[]> {
  const text = await run('spectral', ['lint', file, '--ruleset', path.join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet']);
  const out = (text.trim() ? JSON.parse(text) : []) as Array<{ code: string; severity: number; message: string; path: string[] }>;
  return out.map((r) => ({ rule: r.code, severity: SPECTRAL_SEVERITY[r.severity] ?? String(r.severity), message: r.message, where: r.path.join('/') }));
}

/**
 * Writes the document inside the project (its tmp/ is ignored by git): .spectral.yaml's overrides match paths relative
 * to itself.
 */
async function writeDocument(text: string): Promise<{ dir: string; file: string }> {
  await mkdir(path.join(ROOT, 'tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, 'tmp', 'openapi-lint-'));
  const file = path.join(dir, 'openapi.json');
  await writeFile(file, text);
  return { dir, file };
}

const serious = (findings: Finding[]) => findings.filter((f) => f.severity === 'error' || f.severity === 'warn');
const listed = (findings: Finding[]) => findings.slice(0, 30).map((f) => `${f.severity} ${f.rule} at ${f.where}: ${f.message}`).join('\n');

/** A test app whose PUBLIC_URL is `publicUrl`, the API document it serves, and that document written to a file to lint. */
async function servedDocument(publicUrl: string): Promise<{ t: TestApp; doc: any; dir: string; file: string }> {
  const t = await startTestApp('pglite', { config: { publicUrl } });
  const res = await t.api('GET', '/api/v1/openapi.json');
  assert.equal(res.status, 200);
  return { t, doc: res.json, ...await writeDocument(res.text) };
}

async function closeServed(t: TestApp | undefined, dir: string | undefined): Promise<void> {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}

describe('the API document (/api/v1/openapi.json)', () => {
  let t: TestApp;
  let doc: any;
  let dir: string;
  let file: string;
  before(async () => ({ t, doc, dir, file } = await servedDocument(PUBLIC_URL)));
  after(() => closeServed(t, dir));

  it('lints with no error and no warning under Redocly recommended', async () => {
    const findings = serious(await redocly(file));
    assert.equal(findings.length, 0, listed(findings));
  });

  it('lints with no error and no warning under Spectral spectral:oas and the OWASP ruleset', async () => {
    const findings = serious(await spectral(file));
    assert.equal(findings.length, 0, listed(findings));
  });

  it('is for API users: no web UI route, no schema only those use, and the server is PUBLIC_URL', () => {
    const paths = Object.keys(doc.paths);
    assert.ok(paths.includes('/api/v1/leads'));
    assert.deepEqual(paths.filter((p) => p.startsWith('/ui/') || p.startsWith('/docs') || p === '/metrics'), []);
    assert.deepEqual(Object.keys(doc.components.schemas).filter((name) => name.startsWith('Ui')), []);
    assert.deepEqual(doc.servers, [{ url: PUBLIC_URL, 'x-internal': false }]);
  });

  it('is the document /docs shows', async () => {
    const shown = await t.api('GET', '/docs/json');
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.json, doc);
  });

  it('keeps the web UI routes in the internal document, for the UI types and the fuzzer', () => {
    const internal = t.app.swagger() as any;
    for (const p of ['/ui/api/session', '/ui/api/keys/{id}/revoke', '/ui/api/audit']) assert.ok(internal.paths[p], `${p} is in the internal document`);
  });

  it('names every operation once, in camelCase, and says which need no key', () => {
    const ids: string[] = [];
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        const op = item[method];
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*$/, `${method.toUpperCase()} ${p} has a camelCase operationId`);
        ids.push(op.operationId);
        assert.ok(Array.isArray(op.security), `${method.toUpperCase()} ${p} states its security`);
      }
    }
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
    for (const id of ['listLeads', 'createLead', 'getLead', 'updateLead', 'deleteLead', 'countLeads', 'exportLeads', 'importLeads',
      'listCalls', 'createCall', 'createRun', 'getRun', 'listRuns', 'approveRun', 'rejectRun', 'cancelRun', 'editDraft', 'listDrafts',
      'retryDelivery', 'streamRunEvents', 'startRunBatch']) {
      assert.ok(ids.includes(id), `${id} is an operation`);
    }
    assert.deepEqual(doc.paths['/healthz'].get.security, []);
    assert.deepEqual(doc.paths['/readyz'].get.security, []);
  });

  it('does not require what the server fills in or goes without: defaulted query parameters, optional bodies', () => {
    for (const p of ['/api/v1/leads', '/api/v1/runs', '/api/v1/leads/{leadId}/calls']) {
      const limit = doc.paths[p].get.parameters.find((q: any) => q.name === 'limit');
      assert.equal(limit.required, false, `${p} limit`);
      assert.equal(typeof limit.schema.default, 'number');
    }
    for (const decision of ['approve', 'reject', 'cancel', 'deliver']) {
      assert.equal(doc.paths[`/api/v1/runs/{id}/${decision}`].post.requestBody.required, false, `${decision} takes no body or an optional one`);
    }
    assert.equal(doc.paths['/api/v1/leads'].post.requestBody.required, true);
    assert.equal(doc.paths['/api/v1/leads/{id}'].patch.requestBody.required, true, 'a PATCH without a field is refused');
  });

  it('documents the headers a client sends and reads, as shared components', () => {
    const headerOf = (response: any, name: string) => response.headers?.[name]?.$ref;
    const listLeads = doc.paths['/api/v1/leads'].get;
    assert.equal(headerOf(listLeads.responses['200'], 'Link'), '#/components/headers/Link');
    assert.equal(headerOf(listLeads.responses['200'], 'RateLimit'), '#/components/headers/RateLimit');
    assert.equal(headerOf(listLeads.responses['429'], 'Retry-After'), '#/components/headers/Retry-After');
    assert.equal(headerOf(listLeads.responses['401'], 'WWW-Authenticate'), '#/components/headers/WWW-Authenticate');
    assert.equal(headerOf(listLeads.responses['503'], 'Retry-After'), '#/components/headers/Retry-After');
    const createLead = doc.paths['/api/v1/leads'].post;
    assert.ok(createLead.parameters.some((p: any) => p.$ref === '#/components/parameters/IdempotencyKey'));
    assert.equal(headerOf(createLead.responses['201'], 'Location'), '#/components/headers/Location');
    assert.equal(headerOf(createLead.responses['201'], 'Idempotent-Replayed'), '#/components/headers/Idempotent-Replayed');
    assert.equal(headerOf(doc.paths['/api/v1/runs'].post.responses['202'], 'Location'), '#/components/headers/Location');
    assert.ok(doc.paths['/api/v1/runs/{id}/events'].get.parameters.some((p: any) => p.$ref === '#/components/parameters/LastEventId'));
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        for (const [status, response] of Object.entries<any>(item[method].responses)) {
          assert.equal(headerOf(response, 'X-Request-Id'), '#/components/headers/X-Request-Id', `${method} ${p} ${status}`);
        }
      }
    }
    // OWASP's rate-limit rule is off (.spectral.yaml says why): what it asks is checked here, where it is true.
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      if (p === '/healthz' || p === '/readyz') continue;
      for (const method of METHODS.filter((m) => item[m])) {
        for (const [status, response] of Object.entries<any>(item[method].responses)) {
          const counted = /^[24]/.test(status) && status !== '401' && status !== '403';
          assert.equal(Boolean(headerOf(response, 'RateLimit')), counted, `${method} ${p} ${status} RateLimit`);
          assert.equal(headerOf(response, 'Access-Control-Allow-Origin'), '#/components/headers/Access-Control-Allow-Origin', `${method} ${p} ${status}`);
        }
      }
    }
    assert.equal(doc.components.parameters.IdempotencyKey.name, 'Idempotency-Key');
    assert.equal(doc.components.parameters.LastEventId.name, 'Last-Event-ID');
  });

  it('describes every answer: none is left as "Default Response"', () => {
    const vague: string[] = [];
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        for (const [status, response] of Object.entries<any>(item[method].responses)) {
          const vagueOne = !response.description || response.description === 'Default Response';
          if (vagueOne) vague.push(`${method.toUpperCase()} ${p} ${status}`);
        }
      }
    }
    assert.deepEqual(vague, []);
    assert.match(doc.paths['/api/v1/leads'].post.responses['201'].description, /created/);
  });

  it('describes the event stream as text, each event a RunEvent (a named component), and keeps its JSON form', () => {
    const content = doc.paths['/api/v1/runs/{id}/events'].get.responses['200'].content;
    const stream = content['text/event-stream'];
    assert.equal(stream.schema.type, 'string', 'a stream is text, never one JSON value');
    assert.equal(stream.schema.$ref, undefined);
    const [event, end] = stream['x-itemSchema'].oneOf;
    assert.deepEqual(event.properties.data.contentSchema, { $ref: '#/components/schemas/RunEvent' });
    assert.equal(event.properties.data.contentMediaType, 'application/json');
    assert.deepEqual(end.properties.event.enum, ['end']);
    assert.equal(doc.components.schemas.RunEvent.type, 'object');
    assert.ok(doc.components.schemas.RunEvent.properties.type.enum.includes('step.completed'));
    const items = content['application/json'].schema.properties.data.items;
    assert.deepEqual(items, { $ref: '#/components/schemas/RunEvent' });
  });

  it('describes every text/csv body, sent or answered, as a string', () => {
    const csv: Array<[string, any]> = [];
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS.filter((m) => item[m])) {
        const op = item[method];
        const body = op.requestBody?.content?.['text/csv'];
        if (body) csv.push([`${method} ${p} body`, body.schema]);
        for (const [status, response] of Object.entries<any>(op.responses)) {
          const answer = response.content?.['text/csv'];
          if (answer) csv.push([`${method} ${p} ${status}`, answer.schema]);
        }
      }
    }
    const places = csv.map(([where]) => where).sort();
    assert.deepEqual(places, [
      'get /api/v1/leads/export 200', 'get /api/v1/suppressions/export 200', 'post /api/v1/leads/import body', 'post /api/v1/suppressions/import body',
    ]);
    for (const [where, schema] of csv) assert.equal(schema.type, 'string', where);
  });

  it('takes a JSON import with invalid rows as the server does: a valid request, answered 200', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    // The body's schema as the document gives it, its references pointed at the document's components.
    const written = doc.paths['/api/v1/leads/import'].post.requestBody.content['application/json'].schema;
    const schema = JSON.parse(JSON.stringify(written).replaceAll('"#/components/', '"doc#/components/'));
    const validate = ajv.compile(schema);
    const leads = [
      { name: 'Valid Row' }, { name: '' }, { email: 'not an address' }, 'not a lead', { name: 'Extra', x: 1 },
    ];
    const body = { leads };
    assert.ok(validate(body), `the document takes it: ${ajv.errorsText(validate.errors)}`);
    assert.ok(!validate({ leads: 'not a list' }), 'but not a body without its list of leads');

    const ws = await t.workspace();
    const { key } = await t.key(ws.id);
    const res = await t.api('POST', '/api/v1/leads/import?dryRun=true', { key, body });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual([res.json.created, res.json.skipped], [1, 4]);
  });

  it('gives Problem.code as the closed list of codes', () => {
    assert.deepEqual([...doc.components.schemas.Problem.properties.code.enum].sort(), [...ERROR_CODES].sort());
  });

  it('lists in `webhooks` every event an endpoint can be sent, with its signature headers and its data', () => {
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [...WEBHOOK_EVENT_TYPES, 'webhook.test'].sort());
    const completed = doc.webhooks['run.completed'].post;
    assert.deepEqual(completed.parameters.map((p: any) => p.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    const body = completed.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required, ['type', 'timestamp', 'data']);
    assert.deepEqual(body.properties.type.enum, ['run.completed']);
    assert.equal(body.properties.data.$ref, '#/components/schemas/Run');
    assert.equal(doc.webhooks['lead.created'].post.requestBody.content['application/json'].schema.properties.data.$ref, '#/components/schemas/Lead');
  });

  it('sends the headers it documents: a page with Link and quota, a replayed create, a 401 with WWW-Authenticate', async () => {
    const ws = await t.workspace();
    const { key } = await t.key(ws.id);
    for (const name of ['Ada', 'Grace']) assert.equal((await t.api('POST', '/api/v1/leads', { key, body: { name } })).status, 201);
    const page = await t.api('GET', '/api/v1/leads?limit=1', { key });
    for (const name of ['link', 'ratelimit', 'ratelimit-policy', 'x-request-id', 'access-control-allow-origin']) assert.ok(page.headers.get(name), `a page has ${name}`);
    const headers = { 'idempotency-key': 'lint-1' };
    const first = await t.api('POST', '/api/v1/leads', { key, body: { name: 'Edsger' }, headers });
    const again = await t.api('POST', '/api/v1/leads', { key, body: { name: 'Edsger' }, headers });
    assert.equal(first.headers.get('location'), again.headers.get('location'));
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const refused = await t.api('GET', '/api/v1/leads', { key: 'sk_wrong' });
    assert.equal(refused.status, 401);
    assert.ok(refused.headers.get('www-authenticate'));
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
    assert.equal(refused.headers.get('ratelimit'), null, 'a refused key is not counted, as the document says');
    const health = await t.api('GET', '/healthz?probe=%00');
    assert.equal(health.status, 400, 'even /healthz has a 4xx answer, as documented');
    assert.equal(health.headers.get('ratelimit'), null, '/healthz is not rate limited');
    assert.equal(health.headers.get('access-control-allow-origin'), null, '/healthz is not of the cross-origin API');
  });
});

describe('the API document as a fresh `npm start` serves it (PUBLIC_URL left at http://localhost:3000)', () => {
  let t: TestApp;
  let doc: any;
  let dir: string;
  let file: string;
  // The default PUBLIC_URL, as loadConfig makes it from an empty environment.
  before(async () => ({ t, doc, dir, file } = await servedDocument(loadConfig({}).publicUrl)));
  after(() => closeServed(t, dir));

  it('names its server `/`, the one that serves it, for local use', () => {
    assert.equal(loadConfig({}).publicUrl, 'http://localhost:3000');
    assert.equal(doc.servers.length, 1);
    assert.equal(doc.servers[0].url, '/');
    assert.match(doc.servers[0].description, /local/);
  });

  it('lints with no error and no warning under Redocly recommended', async () => {
    const findings = serious(await redocly(file));
    assert.equal(findings.length, 0, listed(findings));
  });

  it('lints with no error and no warning under Spectral spectral:oas and the OWASP ruleset', async () => {
    const findings = serious(await spectral(file));
    assert.equal(findings.length, 0, listed(findings));
  });
});

describe('what a new route gets by rule (src/http/openapi.ts)', () => {
  const problem = { description: 'A problem.', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
  const written = (): OpenApiDocument => ({
    openapi: '3.1.0',
    servers: [{ url: PUBLIC_URL }],
    paths: {
      '/api/v1/things': {
        get: {
          security: [{ bearerAuth: [] }],
          parameters: [
            { in: 'query', name: 'limit', required: true, schema: { type: 'integer', default: 50 } },
            { in: 'query', name: 'cursor', required: false, schema: { type: 'string' } },
          ],
          responses: { 200: { description: 'A page.' }, 401: problem, 403: problem, 429: problem },
        },
        post: {
          security: [{ bearerAuth: [] }],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { note: { type: 'string' } } } } } },
          responses: { 201: { description: 'Made.' }, 400: problem, 503: problem },
        },
      },
      '/ui/api/things': { get: { responses: { 200: { description: 'For the web UI.' } } } },
    },
    components: { schemas: { Problem: { type: 'object' }, UiThing: { type: 'object' } } },
    webhooks: { thingMade: { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } } } },
  } as unknown as OpenApiDocument);

  it('documents headers, optional parameters and bodies, and the 500 answer of a route nobody wrote them for', () => {
    const doc = finishDocument(written()) as any;
    const list = doc.paths['/api/v1/things'].get;
    assert.equal(list.parameters[0].required, false, 'a parameter with a default is not required');
    assert.deepEqual(Object.keys(list.responses['200'].headers), ['X-Request-Id', 'Access-Control-Allow-Origin', 'RateLimit', 'RateLimit-Policy', 'Link']);
    assert.deepEqual(Object.keys(list.responses['401'].headers), ['X-Request-Id', 'Access-Control-Allow-Origin', 'WWW-Authenticate']);
    assert.deepEqual(Object.keys(list.responses['429'].headers), ['X-Request-Id', 'Access-Control-Allow-Origin', 'RateLimit', 'RateLimit-Policy', 'Retry-After']);
    assert.ok(list.responses['500'].content['application/problem+json']);
    const create = doc.paths['/api/v1/things'].post;
    assert.equal(create.requestBody.required, false, 'a body of optional fields may be left out');
    assert.deepEqual(create.parameters, [{ $ref: '#/components/parameters/IdempotencyKey' }]);
    assert.deepEqual(Object.keys(create.responses['201'].headers),
      ['X-Request-Id', 'Access-Control-Allow-Origin', 'RateLimit', 'RateLimit-Policy', 'Location', 'Idempotent-Replayed']);
    assert.deepEqual(Object.keys(create.responses['503'].headers), ['X-Request-Id', 'Access-Control-Allow-Origin', 'Retry-After']);
    assert.deepEqual(doc.servers, [{ url: PUBLIC_URL, 'x-internal': false }]);
  });

  it('leaves the web UI out of the public document, and keeps what webhooks refer to', () => {
    const internal = finishDocument(written());
    internal.components.schemas!.Thing = { type: 'object' };
    const doc = publicDocument(internal) as any;
    assert.deepEqual(Object.keys(doc.paths), ['/api/v1/things']);
    assert.deepEqual(Object.keys(doc.components.schemas).sort(), ['Problem', 'Thing']);
    assert.ok(internal.paths['/ui/api/things'], 'the internal document is left as it is');
  });
});
