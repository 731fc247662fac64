// The shared security test. It is generated from `app.routeTable`: every route that names a scope is checked for
// 401 (no or bad credentials), 403 (a key of the workspace without that scope) and 404 (another workspace's key
// aimed at this workspace's resources). A new route is covered the moment it is registered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKey, isWellFormedKey } from '../../src/domain/keys/keys.ts';
import { buildApp } from '../../src/http/app.ts';
import type { RouteEntry } from '../../src/http/app-instance.ts';
import { ALL_SCOPES, BACKENDS, silentLogger, startTestApp, TRANSCRIPT, type ApiResponse, type TestApp } from '../helpers.ts';
import { assertProblem, countRows, createCall, createLead, isPublicRoute, repliedEmail, startRun, waitingEmail } from './support.ts';

const SECRET_NAME = 'Secret Lead of Workspace A';
const SECRET_COMPANY = 'Confidential Holdings A';

interface Resources {
  lead: any;
  call: any;
  run: any;
  webhook: any;
  delivery: any;
  /** An e-mail of A waiting in its outbox (DESIGN §14). */
  outbox: string;
  sequence: any;
  suppression: any;
  reply: { id: string };
}

/** The route's path with each parameter filled from a real resource, chosen by the collection it follows. */
function pathFor(route: RouteEntry, ids: { leads: string; calls: string; runs: string; webhooks: string; deliveries: string; outbox: string; sequences: string; touches: string; suppressions: string; replies: string }): string {
  const segments = route.url.split('/');
  return segments.map((segment, i) => {
    if (!segment.startsWith(':')) return segment;
    const collection = segments[i - 1] as keyof typeof ids;
    const id = ids[collection];
    if (!id) throw new Error(`route-access: no resource known for ${segment} after /${segments[i - 1]} in ${route.url}; teach pathFor`);
    return id;
  }).join('/');
}

/** A body that passes validation, so that only authentication, scope and ownership decide the answer. */
function bodyFor(route: RouteEntry, r: Resources): unknown {
  if (route.method === 'GET' || route.method === 'DELETE') return undefined;
  const key = `${route.method} ${route.url}`;
  switch (key) {
    case 'POST /api/v1/leads': return { name: 'Mallory' };
    case 'POST /api/v1/leads/import': return { leads: [{ name: 'Mallory' }] };
    case 'PATCH /api/v1/leads/:id': return { name: 'Mallory' };
    case 'POST /api/v1/leads/:leadId/calls': return { transcript: 'Mallory: hello' };
    case 'POST /api/v1/runs': return { leadId: r.lead.id, callId: r.call.id };
    case 'POST /api/v1/runs/batch': return { runs: [{ leadId: r.lead.id, callId: r.call.id }] };
    case 'PATCH /api/v1/runs/:id/draft': return { subject: 'Mallory' };
    case 'POST /api/v1/webhooks': return { url: 'https://93.184.215.14/mallory' };
    case 'POST /api/v1/sequences': return { name: 'Mallory', steps: [{ waitDays: 1, instruction: 'Mallory', review: 'auto' }] };
    case 'PATCH /api/v1/sequences/:id': return { name: 'Mallory' };
    case 'PATCH /api/v1/runs/:id/touches/:number/draft': return { body: 'Mallory' };
    case 'POST /api/v1/suppressions': return { email: 'mallory@b.example' };
    case 'POST /api/v1/replies/:id/classification': return { classification: 'other' };
    default: return {};
  }
}

const label = (route: RouteEntry) => `${route.method} ${route.url}`;

/** The routes that need no key without being one of the known public routes: must always be none. */
const openByMistake = (table: RouteEntry[]) => table.filter((r) => r.scope === null && r.access === null && !isPublicRoute(r)).map(label);

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let routes: RouteEntry[];
    let a: Resources;
    let keyA: string;
    let keyB: string;
    let revokedKey: string;
    const withoutScope = new Map<string, string>();
    let counts: { leads: number; calls: number; runs: number };

    before(async () => {
      t = await startTestApp(kind);
      routes = t.app.routeTable.filter((r) => r.scope !== null);
      const A = await t.workspace('pro', 'Workspace A');
      const B = await t.workspace('pro', 'Workspace B');
      keyA = (await t.key(A.id, ALL_SCOPES)).key;
      keyB = (await t.key(B.id, ALL_SCOPES)).key;
      for (const scope of ALL_SCOPES) withoutScope.set(scope, (await t.key(A.id, ALL_SCOPES.filter((s) => s !== scope), `all but ${scope}`)).key);
      const revoked = await t.key(A.id, ALL_SCOPES, 'revoked');
      await t.revoke(revoked.id);
      revokedKey = revoked.key;
      const lead = await createLead(t, keyA, { name: SECRET_NAME, companyName: SECRET_COMPANY, email: 'secret@a.example' });
      const call = await createCall(t, keyA, lead.id, { transcript: TRANSCRIPT, title: 'Secret call of A' });
      const run = await startRun(t, keyA, lead.id, call.id);
      // An endpoint on a public address given as an IP (nothing is resolved), with a delivery that no runner sends.
      const webhook = (await t.api('POST', '/api/v1/webhooks', { key: keyA, body: { url: 'https://93.184.215.14/hook' } })).json;
      const delivery = (await t.api('POST', `/api/v1/webhooks/${webhook.id}/test`, { key: keyA })).json.data;
      const reply = { id: await repliedEmail(t, A.id, run.id) };
      const sequence = (await t.api('GET', '/api/v1/sequences', { key: keyA })).json.data[0];
      const suppression = (await t.api('POST', '/api/v1/suppressions', { key: keyA, body: { email: 'suppressed@a.example' } })).json.data;
      a = { lead, call, run, webhook, delivery, outbox: await waitingEmail(t, A.id, run.id), sequence, suppression, reply };
      counts = { leads: await countRows(t, 'leads'), calls: await countRows(t, 'calls'), runs: await countRows(t, 'runs') };
    });
    after(() => t?.close());

    const request = (route: RouteEntry, options: { key?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse> => {
      const body = bodyFor(route, a);
      return t.api(route.method, pathFor(route, { leads: a.lead.id, calls: a.call.id, runs: a.run.id, webhooks: a.webhook.id, deliveries: a.delivery.id, outbox: a.outbox, sequences: a.sequence.id, touches: '2', suppressions: a.suppression.id, replies: a.reply.id }), {
        ...options, ...(body !== undefined ? { body } : {}),
      });
    };

    it('every route without a scope is one of the known public routes', () => {
      assert.deepEqual(openByMistake(t.app.routeTable), [], 'routes that need no key but are not known public routes');
    });

    it('would catch a route registered without a scope', async () => {
      const app = await buildApp(t.deps, { logger: silentLogger });
      app.get('/api/v1/leads/:id/export', async () => ({ leaked: true }));
      app.post('/healthz', async () => ({ ok: true }));
      app.get('/api/v1/notes', { config: { scope: 'leads:read' } }, async () => ({ data: [] }));
      await app.ready();
      try {
        assert.deepEqual(openByMistake(app.routeTable), ['GET /api/v1/leads/:id/export', 'POST /healthz']);
        assert.ok(app.routeTable.some((r) => r.url === '/api/v1/notes' && r.scope === 'leads:read'), 'a scoped route is listed with its scope');
      } finally {
        await app.close();
      }
    });

    it('every route names a known scope, and the interface document\'s endpoints carry its scopes', () => {
      assert.ok(routes.length >= 4, 'scoped routes exist');
      for (const route of routes) assert.ok((ALL_SCOPES as string[]).includes(route.scope!), `${label(route)} names a known scope`);
      const scopeOf = (method: string, url: string) => routes.find((r) => r.method === method && r.url === url)?.scope;
      assert.equal(scopeOf('GET', '/api/v1/leads'), 'leads:read');
      assert.equal(scopeOf('POST', '/api/v1/leads'), 'leads:write');
      assert.equal(scopeOf('POST', '/api/v1/runs'), 'runs:write');
      assert.equal(scopeOf('GET', '/api/v1/runs/:id'), 'runs:read');
      // DESIGN §3 extensions.
      assert.equal(scopeOf('GET', '/api/v1/leads/:id'), 'leads:read');
      assert.equal(scopeOf('PATCH', '/api/v1/leads/:id'), 'leads:write');
      assert.equal(scopeOf('POST', '/api/v1/leads/:leadId/calls'), 'leads:write');
      assert.equal(scopeOf('GET', '/api/v1/leads/:leadId/calls'), 'leads:read');
      assert.equal(scopeOf('GET', '/api/v1/runs'), 'runs:read');
      assert.equal(scopeOf('GET', '/api/v1/leads/count'), 'leads:read');
      // DESIGN §9.
      assert.equal(scopeOf('GET', '/api/v1/webhooks'), 'webhooks:read');
      assert.equal(scopeOf('POST', '/api/v1/webhooks'), 'webhooks:write');
      assert.equal(scopeOf('GET', '/api/v1/webhooks/:id/deliveries'), 'webhooks:read');
      assert.equal(scopeOf('POST', '/api/v1/webhooks/:id/deliveries/:deliveryId/retry'), 'webhooks:write');
      assert.equal(scopeOf('GET', '/api/v1/leads/export'), 'leads:read');
      assert.equal(scopeOf('DELETE', '/api/v1/leads/:id'), 'leads:write');
      assert.equal(scopeOf('DELETE', '/api/v1/leads/:leadId/calls/:id'), 'leads:write');
      // DESIGN §7: editing a draft, and its versions.
      assert.equal(scopeOf('PATCH', '/api/v1/runs/:id/draft'), 'runs:write');
      assert.equal(scopeOf('GET', '/api/v1/runs/:id/drafts'), 'runs:read');
      for (const route of routes.filter((r) => r.url.startsWith('/api/v1/runs/') && r.method === 'POST')) {
        assert.equal(route.scope, 'runs:write', `${label(route)}: run transitions need runs:write`);
      }
    });

    it('answers 401 with WWW-Authenticate: Bearer when there is no Authorization header', async (c) => {
      for (const route of routes) {
        await c.test(label(route), async () => {
          const res = await request(route);
          assertProblem(res, 401, 'unauthorized', label(route));
          assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/, 'WWW-Authenticate');
        });
      }
    });

    it('answers 401 for a bare scheme, another scheme, a bad checksum, an unknown key and a revoked key', async (c) => {
      const badChecksum = `${keyA.slice(0, -1)}${keyA.endsWith('a') ? 'b' : 'a'}`;
      const unknownKey = generateKey();
      assert.ok(!isWellFormedKey(badChecksum) && isWellFormedKey(unknownKey));
      const credentials: Record<string, string> = {
        'Bearer alone': 'Bearer',
        'Bearer and a space': 'Bearer ',
        'Basic credentials': `Basic ${Buffer.from(`user:${keyA}`).toString('base64')}`,
        'the key without a scheme': keyA,
        'a key with a bad checksum': `Bearer ${badChecksum}`,
        'a well-formed unknown key': `Bearer ${unknownKey}`,
        'a key with something after it': `Bearer ${keyA} extra`,
        'a revoked key': `Bearer ${revokedKey}`,
      };
      for (const route of routes) {
        for (const [name, authorization] of Object.entries(credentials)) {
          await c.test(`${label(route)} with ${name}`, async () => {
            const res = await request(route, { headers: { authorization } });
            assertProblem(res, 401, 'unauthorized', `${label(route)} with ${name}`);
            assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/);
          });
        }
      }
    });

    it('takes the Bearer scheme in any case and after more than one space (RFC 9110 §11.1, §11.4)', async () => {
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        for (const authorization of [`${scheme} ${keyA}`, `${scheme}   ${keyA}`]) {
          const res = await t.api('GET', `/api/v1/runs/${a.run.id}`, { headers: { authorization } });
          assert.equal(res.status, 200, `${JSON.stringify(authorization.replace(keyA, 'sk_…'))}: ${res.text.slice(0, 200)}`);
        }
      }
      for (const authorization of [`Bearer\t${keyA}`, `Bearers ${keyA}`, `Bear ${keyA}`]) {
        assertProblem(await t.api('GET', `/api/v1/runs/${a.run.id}`, { headers: { authorization } }), 401, 'unauthorized', authorization.replace(keyA, 'sk_…'));
      }
    });

    it('answers 401 on the HEAD and trailing-slash variants of every GET route', async (c) => {
      for (const route of routes.filter((r) => r.method === 'GET')) {
        await c.test(label(route), async () => {
          const path = pathFor(route, { leads: a.lead.id, calls: a.call.id, runs: a.run.id, webhooks: a.webhook.id, deliveries: a.delivery.id, outbox: a.outbox, sequences: a.sequence.id, touches: '2', suppressions: a.suppression.id, replies: a.reply.id });
          const head = await t.api('HEAD', path);
          assert.equal(head.status, 401, `HEAD ${path}`);
          assert.equal(head.text, '', 'HEAD has no body');
          assertProblem(await t.api('GET', `${path}/`), 401, 'unauthorized', `${path}/`);
        });
      }
    });

    it("answers 403 insufficient_scope with requiredScope to a key of the workspace holding every scope but the route's", async (c) => {
      for (const route of routes) {
        await c.test(label(route), async () => {
          const res = await request(route, { key: withoutScope.get(route.scope!)! });
          assertProblem(res, 403, 'insufficient_scope', label(route));
          assert.equal(res.json.requiredScope, route.scope);
          assert.equal(res.headers.get('www-authenticate'), null, 'a 403 does not ask for credentials again');
        });
      }
    });

    it('checks the key before the body: 401 and 403 win over an invalid or non-JSON body', async (c) => {
      for (const route of routes.filter((r) => r.method !== 'GET')) {
        const path = pathFor(route, { leads: a.lead.id, calls: a.call.id, runs: a.run.id, webhooks: a.webhook.id, deliveries: a.delivery.id, outbox: a.outbox, sequences: a.sequence.id, touches: '2', suppressions: a.suppression.id, replies: a.reply.id });
        await c.test(label(route), async () => {
          const junk = { raw: '{"not json', headers: { 'content-type': 'application/json' } };
          assertProblem(await t.api(route.method, path, junk), 401, 'unauthorized');
          const text = { raw: 'hello', headers: { 'content-type': 'text/plain' } };
          assertProblem(await t.api(route.method, path, { ...text, key: withoutScope.get(route.scope!)! }), 403, 'insufficient_scope');
          assertProblem(await t.api(route.method, path, { ...junk, key: withoutScope.get(route.scope!)! }), 403, 'insufficient_scope');
        });
      }
    });

    it("answers 404 not_found (never 403) to another workspace's full key aimed at this workspace's resources", async (c) => {
      for (const route of routes) {
        const body = bodyFor(route, a);
        const aimsAtA = route.url.includes(':') || JSON.stringify(body ?? {}).includes(a.lead.id);
        await c.test(label(route), async () => {
          const res = await request(route, { key: keyB });
          for (const secret of [SECRET_NAME, SECRET_COMPANY, 'secret@a.example', 'Secret call of A', TRANSCRIPT.slice(0, 30)]) {
            assert.ok(!res.text.includes(secret), `${label(route)} does not reveal "${secret}"`);
          }
          if (aimsAtA) {
            assertProblem(res, 404, 'not_found', label(route));
          } else {
            // A collection route answers for B's own workspace, which holds none of A's resources.
            assert.ok(res.status >= 200 && res.status < 300, `${label(route)}: ${res.status} ${res.text}`);
            for (const id of [a.lead.id, a.call.id, a.run.id]) assert.ok(!res.text.includes(id), `${label(route)} does not list ${id}`);
          }
        });
      }
    });

    it("does not list workspace A's resources to B even when filtered by A's ids", async () => {
      const runs = await t.api('GET', `/api/v1/runs?leadId=${a.lead.id}`, { key: keyB });
      assert.equal(runs.status, 200, runs.text);
      assert.deepEqual(runs.json.data, []);
      const leads = await t.api('GET', '/api/v1/leads?limit=100', { key: keyB });
      assert.ok(!leads.json.data.some((l: any) => l.id === a.lead.id));
    });

    it('changed nothing of workspace A through all the refused requests', async () => {
      const res = await t.api('GET', `/api/v1/leads/${a.lead.id}`, { key: keyA });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json.data, a.lead, 'the lead is as it was created');
      const calls = await t.api('GET', `/api/v1/leads/${a.lead.id}/calls`, { key: keyA });
      assert.deepEqual(calls.json.data.map((x: any) => x.id), [a.call.id]);
      // B's collection POSTs (a lead, an import of one) created leads in B; nothing else was created anywhere.
      const creating = ['/api/v1/leads', '/api/v1/leads/import'];
      assert.equal(await countRows(t, 'leads'), counts.leads + routes.filter((r) => r.method === 'POST' && creating.includes(r.url)).length);
      assert.equal(await countRows(t, 'calls'), counts.calls);
      assert.equal(await countRows(t, 'runs'), counts.runs);
    });
  });
}
