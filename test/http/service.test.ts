// Service endpoints that need no key (health, readiness, metrics, the OpenAPI document, the docs), unknown routes,
// request ids, and that no answer carries a stack trace.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertNoStackTrace, assertProblem, createCall, createLead, refuseAuditFor, startRun, UUID } from './support.ts';

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let key: string;
    let lead: any;
    let run: any;

    before(async () => {
      t = await startTestApp(kind);
      const A = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      lead = await createLead(t, key);
      run = await startRun(t, key, lead.id, (await createCall(t, key, lead.id)).id);
    });
    after(() => t?.close());

    it('GET /healthz answers 200 without a key', async () => {
      const res = await t.api('GET', '/healthz');
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { status: 'ok' });
      assert.ok(res.headers.get('x-request-id'));
    });

    it('GET /readyz answers 200 with the database kind', async () => {
      const res = await t.api('GET', '/readyz');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { status: 'ok', database: kind });
    });

    it('GET /metrics serves Prometheus text with request durations labelled by route pattern, never by id', async () => {
      const unknownRun = randomUUID();
      const strayId = randomUUID();
      await t.api('GET', `/api/v1/leads/${lead.id}`, { key });
      await t.api('GET', `/api/v1/runs/${run.id}`, { key });
      await t.api('GET', `/api/v1/runs/${unknownRun}`, { key });
      await t.api('GET', `/no/such/route/${strayId}`);
      const res = await t.api('GET', '/metrics');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(res.text, /^# HELP leadrun_http_request_duration_seconds /m);
      assert.match(res.text, /^# TYPE leadrun_http_request_duration_seconds histogram$/m);
      const series = res.text.split('\n').filter((line) => line.startsWith('leadrun_http_request_duration_seconds_count{'));
      const has = (route: string, status: number) => series.some((l) => l.includes(`route="${route}"`) && l.includes(`status="${status}"`) && l.includes('method="GET"'));
      assert.ok(has('/api/v1/leads/:id', 200), series.join('\n'));
      assert.ok(has('/api/v1/runs/:id', 200));
      assert.ok(has('/api/v1/runs/:id', 404));
      for (const id of [lead.id, run.id, unknownRun, strayId]) assert.ok(!res.text.includes(id), `metrics do not carry the id ${id}`);
      assert.doesNotMatch(res.text, /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i, 'no UUID in any label');
      assert.ok(!res.text.includes('/no/such/route'), 'unknown paths do not become series');
    });

    describe('GET /api/v1/openapi.json', () => {
      let doc: any;
      before(async () => {
        const res = await t.api('GET', '/api/v1/openapi.json');
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        doc = res.json;
      });

      it('is OpenAPI 3.1 with a bearer security scheme and the Problem component', () => {
        assert.match(doc.openapi, /^3\.1\.\d+$/);
        assert.equal(typeof doc.info?.title, 'string');
        const schemes = Object.values(doc.components?.securitySchemes ?? {}) as any[];
        assert.ok(schemes.some((s) => s.type === 'http' && s.scheme === 'bearer'), 'an http bearer scheme');
        const problem = doc.components?.schemas?.Problem;
        assert.ok(problem, 'components.schemas.Problem');
        for (const field of ['type', 'title', 'status', 'detail', 'code', 'requestId']) {
          assert.ok(problem.properties?.[field], `Problem.${field}`);
          assert.ok(problem.required?.includes(field), `Problem.${field} is required`);
        }
      });

      it('documents every route that needs a scope, with its security and its error answers', () => {
        const bearer = Object.entries(doc.components.securitySchemes).find(([, s]: [string, any]) => s.scheme === 'bearer')![0];
        const scoped = t.app.routeTable.filter((r) => r.scope !== null);
        assert.ok(scoped.length > 0);
        for (const route of scoped) {
          const path = route.url.replace(/:(\w+)/g, '{$1}');
          const op = doc.paths?.[path]?.[route.method.toLowerCase()];
          assert.ok(op, `${route.method} ${path} is documented`);
          assert.deepEqual(op.security, [{ [bearer]: [] }], `${route.method} ${path} names the bearer scheme`);
          assert.ok(String(op.description ?? '').includes(route.scope!), `${route.method} ${path} states its scope`);
          for (const status of ['401', '403', '404']) {
            const schema = op.responses?.[status]?.content?.['application/problem+json']?.schema;
            assert.deepEqual(schema, { $ref: '#/components/schemas/Problem' }, `${route.method} ${path} documents ${status} as an application/problem+json Problem`);
          }
          for (const param of route.url.match(/:(\w+)/g) ?? []) {
            assert.ok(op.parameters?.some((p: any) => p.in === 'path' && p.name === param.slice(1)), `${path} documents ${param}`);
          }
        }
      });

      it('documents the success statuses of the interface document, from the schemas that validate requests', () => {
        assert.ok(doc.paths['/api/v1/leads'].get.responses['200']);
        assert.ok(doc.paths['/api/v1/leads'].post.responses['201']);
        assert.ok(doc.paths['/api/v1/runs'].post.responses['202']);
        assert.ok(doc.paths['/api/v1/runs'].post.responses['402'], 'the Free-plan 402');
        assert.ok(doc.paths['/api/v1/runs/{id}'].get.responses['200']);
        const create = doc.paths['/api/v1/leads'].post.requestBody.content['application/json'].schema;
        assert.deepEqual(create.required, ['name']);
        assert.equal(create.additionalProperties, false);
        assert.equal(create.properties.name.maxLength, 200);
        const limit = doc.paths['/api/v1/leads'].get.parameters.find((p: any) => p.name === 'limit');
        assert.equal(limit.in, 'query');
        assert.equal(limit.schema.maximum, 100);
        assert.equal(limit.schema.default, 50);
      });

      it('needs no key and exposes no internal route', () => {
        for (const path of Object.keys(doc.paths)) assert.ok(!path.startsWith('/docs') && path !== '/metrics', `${path} is not part of the API`);
      });
    });

    it('GET /docs serves a readable HTML reference', async () => {
      const res = await t.api('GET', '/docs');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(res.text, /<html/i);
    });

    it("GET /docs is leadrun's: its title, colours, mark and icon, every file served from here", async () => {
      const page = await t.api('GET', '/docs');
      assert.match(page.text, /<title>leadrun API reference<\/title>/);
      assert.doesNotMatch(page.text, /https?:\/\//, 'nothing is loaded from another site');
      assert.match(page.text, /href="\/docs\/static\/theme\/leadrun\.css"/);
      assert.match(page.text, /rel="icon" type="image\/svg\+xml" href="\/docs\/static\/theme\/leadrun\.svg"/);
      assert.doesNotMatch(page.text, /favicon-32x32\.png/, 'not the stock icon');

      const css = await t.api('GET', '/docs/static/theme/leadrun.css');
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      assert.match(css.text, /\.swagger-ui \.opblock\.opblock-get \.opblock-summary-method \{ background: #3346c9; \}/);
      const icon = await t.api('GET', '/docs/static/theme/leadrun.svg');
      assert.equal(icon.status, 200);
      assert.match(icon.headers.get('content-type') ?? '', /^image\/svg\+xml/);

      // The top bar's mark is leadrun's, put in as a data: URL, which the CSP of /docs allows for images.
      const initializer = await t.api('GET', '/docs/static/swagger-initializer.js');
      const logo = /img\.src = 'data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)'/.exec(initializer.text);
      assert.ok(logo, 'a logo is set');
      const svg = Buffer.from(logo[1]!, 'base64').toString('utf8');
      assert.equal(svg, await readFile(new URL('../../src/http/docs-theme/logo.svg', import.meta.url), 'utf8'), 'not the stock Fastify logo');
      assert.match(svg, /aria-label="leadrun API reference"/);
      assert.match(page.headers.get('content-security-policy') ?? '', /img-src 'self' data:/);
    });

    it('answers an unknown route or method with a 404 problem, with or without a key', async () => {
      for (const [method, path] of [['GET', '/api/v1/nothing-here'], ['GET', '/api/v2/leads'], ['PUT', `/api/v1/leads/${lead.id}`], ['PUT', '/api/v1/runs'], ['GET', '/ui/api/nothing-here'], ['POST', '/']]) {
        for (const k of [undefined, key]) {
          const res = await t.api(method!, path!, k ? { key: k } : {});
          assertProblem(res, 404, 'not_found', `${method} ${path}`);
        }
      }
      const untouched = await t.api('GET', `/api/v1/leads/${lead.id}`, { key });
      assert.equal(untouched.status, 200, 'PUT did nothing');
    });

    it("answers a person's GET of an unknown page with the web UI (its not-found page) and a 404", async () => {
      for (const k of [undefined, key]) {
        const res = await t.api('GET', '/nothing-here', k ? { key: k } : {});
        assert.equal(res.status, 404);
        assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      }
    });

    describe('X-Request-Id', () => {
      it('echoes a sane id the client sends, in the header and in problems', async () => {
        for (const id of ['req-123', 'a.b:c_d-E', 'x'.repeat(128), randomUUID()]) {
          const ok = await t.api('GET', '/healthz', { headers: { 'x-request-id': id } });
          assert.equal(ok.headers.get('x-request-id'), id);
          const refused = await t.api('GET', '/api/v1/leads', { headers: { 'x-request-id': id } });
          assertProblem(refused, 401, 'unauthorized');
          assert.equal(refused.json.requestId, id);
        }
      });

      it('replaces junk with an id of its own', async () => {
        for (const junk of ['x'.repeat(300), 'x'.repeat(129), 'has spaces in it', 'semi;colon', '<script>', 'quote"d', '']) {
          const res = await t.api('GET', '/api/v1/leads', { headers: { 'x-request-id': junk } });
          const id = res.headers.get('x-request-id') ?? '';
          assert.notEqual(id, junk);
          assert.match(id, UUID, `a fresh id instead of ${JSON.stringify(junk)}`);
          assert.equal(res.json.requestId, id);
        }
      });

      it('gives every request its own id when the client sends none', async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 5; i++) ids.add((await t.api('GET', '/healthz')).headers.get('x-request-id') ?? '');
        assert.equal(ids.size, 5);
        for (const id of ids) assert.match(id, UUID);
      });
    });

    it('never sends a stack trace: an internal error is a plain 500 problem', async () => {
      await refuseAuditFor(t, 'force-internal-error');
      const res = await t.api('POST', '/api/v1/leads', { key, body: { name: 'Boom' }, headers: { 'user-agent': 'force-internal-error' } });
      assertProblem(res, 500, 'internal');
      assert.ok(!res.text.includes('secret detail') && !/audit_log|plpgsql|trigger/i.test(res.text), res.text);
      assert.equal(res.headers.get('x-request-id'), res.json.requestId);
      // The client errors that come from parsers and validators carry none either.
      for (const raw of ['{"name":', '{"name": "\\u"}', '[1,2']) {
        const bad = await t.api('POST', '/api/v1/leads', { key, raw, headers: { 'content-type': 'application/json' } });
        assertProblem(bad, 400, 'invalid_request');
        assert.doesNotMatch(bad.text, /Unexpected token|position \d+|SyntaxError/);
      }
      assertNoStackTrace(await t.api('GET', `/api/v1/leads/${'%'}`, { key }));
    });
  });
}
