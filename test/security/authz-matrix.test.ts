// The authorization matrix, generated from the route table: every route × every scope × own or other workspace ×
// key active, revoked, unknown or malformed (and a signed-in person of either workspace), each with the one answer
// it must get; then mass assignment: no body can set an id, a workspace, a timestamp or a status it should not.
// A route added later is in the matrix the moment it is registered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { generateKey, type Scope } from '../../src/domain/keys/keys.ts';
import { createSession } from '../../src/domain/members/sessions.ts';
import { addMember } from '../../src/domain/members/users.ts';
import type { RouteEntry } from '../../src/http/app-instance.ts';
import { SESSION_COOKIE } from '../../src/http/auth.ts';
import { ALL_SCOPES, BACKENDS, startTestApp, TRANSCRIPT, waitForRun, type ApiResponse, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, createCall, createLead, repliedEmail, startRun, waitingEmail } from '../http/support.ts';
import { assertUnchanged, fingerprint, tableNames } from './support.ts';

interface Resources { lead: any; call: any; runs: { queued: any; waiting: any }; webhook: any; delivery: any; sequence: any; suppression: any; outbox: string; reply: string }

const label = (route: RouteEntry) => `${route.method} ${route.url}`;

/** The route's path, each parameter filled with workspace A's resource of the collection it follows. */
function pathFor(route: RouteEntry, a: Resources, runId: string): string {
  const segments = route.url.split('/');
  return segments.map((segment, i) => {
    if (!segment.startsWith(':')) return segment;
    const collection = segments[i - 1];
    if (collection === 'leads') return a.lead.id;
    if (collection === 'calls') return a.call.id;
    if (collection === 'runs') return runId;
    if (collection === 'webhooks') return a.webhook.id;
    if (collection === 'deliveries') return a.delivery.id;
    if (collection === 'sequences') return a.sequence.id;
    if (collection === 'touches') return '2';
    if (collection === 'suppressions') return a.suppression.id;
    if (collection === 'outbox') return a.outbox;
    if (collection === 'replies') return a.reply;
    throw new Error(`authz matrix: no resource known for ${segment} in ${route.url}; teach pathFor`);
  }).join('/');
}

/** A body that passes validation, so that only who is asking decides the answer. */
function bodyFor(route: RouteEntry, a: Resources): unknown {
  switch (label(route)) {
    case 'POST /api/v1/leads': return { name: 'Matrix lead' };
    case 'POST /api/v1/leads/import': return { leads: [{ name: 'Matrix import' }] };
    case 'PATCH /api/v1/leads/:id': return { companyName: 'Matrix edit' };
    case 'POST /api/v1/leads/:leadId/calls': return { transcript: 'Matrix: hello' };
    case 'POST /api/v1/runs': return { leadId: a.lead.id, callId: a.call.id };
    case 'POST /api/v1/runs/batch': return { runs: [{ leadId: a.lead.id, callId: a.call.id }] };
    case 'POST /api/v1/runs/:id/reject': return { feedback: 'matrix' };
    case 'PATCH /api/v1/runs/:id/draft': return { subject: 'Matrix edit' };
    // A public address given as an IP: nothing is resolved, and no runner sends to it.
    case 'POST /api/v1/webhooks': return { url: 'https://93.184.215.14/matrix' };
    case 'PATCH /api/v1/webhooks/:id': return { description: 'Matrix edit' };
    case 'POST /api/v1/sequences': return { name: 'Matrix sequence', steps: [{ waitDays: 2, instruction: 'Matrix bump.', review: 'required' }] };
    case 'PATCH /api/v1/sequences/:id': return { name: 'Matrix edit' };
    case 'PATCH /api/v1/runs/:id/touches/:number/draft': return { body: 'Matrix edit' };
    case 'POST /api/v1/suppressions': return { email: 'matrix@suppressed.example' };
    case 'POST /api/v1/replies/:id/classification': return { classification: 'other' };
    default: return route.method === 'GET' ? undefined : {};
  }
}

type KeyState = 'active' | 'revoked' | 'unknown' | 'malformed';
const SCOPE_SETS: ReadonlyArray<readonly Scope[]> = [...ALL_SCOPES.map((s) => [s]), ALL_SCOPES];

/**
 * The read scope a route's body asks for beyond the route's own, that `scopes` lack: an endpoint for every event type
 * (the body below names none) receives leads and runs, so it needs leads:read and runs:read too (issue 38).
 */
const missingDataScope = (route: RouteEntry, scopes: readonly Scope[]): Scope | null => (
  route.method === 'POST' && route.url === '/api/v1/webhooks'
    ? (['leads:read', 'runs:read'] as const).find((s) => !scopes.includes(s)) ?? null
    : null);

for (const kind of BACKENDS) {
  describe(`authorization matrix (${kind})`, () => {
    let t: TestApp;
    let tables: string[];
    let a: Resources;
    let workspaces: { A: { id: string; adminUserId: string }; B: { id: string; adminUserId: string } };
    /** workspace → scope set → active and revoked keys */
    const keys = new Map<string, { active: string; revoked: string }>();
    let sessions: { A: { token: string; csrf: string }; B: { token: string; csrf: string }; memberA: { token: string; csrf: string } };

    before(async () => {
      t = await startTestApp(kind, { config: { rateLimitPerMinute: 1_000_000 } });
      tables = await tableNames(t.database.db);
      workspaces = { A: await t.workspace('pro', 'Matrix A'), B: await t.workspace('pro', 'Matrix B') };
      for (const [name, ws] of Object.entries(workspaces)) {
        for (const scopes of SCOPE_SETS) {
          const named = scopes.length === ALL_SCOPES.length ? 'every scope' : scopes.join(',');
          const active = await t.key(ws.id, [...scopes], `${name} ${named}`);
          const revoked = await t.key(ws.id, [...scopes], `${name} ${named} revoked`);
          await t.revoke(revoked.id);
          keys.set(`${name}:${scopes.join(',')}`, { active: active.key, revoked: revoked.key });
        }
      }
      const full = keys.get(`A:${ALL_SCOPES.join(',')}`)!.active;
      const lead = await createLead(t, full, { name: 'Matrix Ada', companyName: 'Matrix Engines' });
      const call = await createCall(t, full, lead.id, { transcript: TRANSCRIPT });
      const waiting = await startRun(t, full, lead.id, call.id);
      const worker = await t.startWorker();
      await waitForRun(t, full, waiting.id, (run) => run.status === 'AWAITING_APPROVAL');
      await worker.stop();
      const queued = await startRun(t, full, lead.id, call.id);
      const webhook = (await t.api('POST', '/api/v1/webhooks', { key: full, body: { url: 'https://93.184.215.14/hook' } })).json;
      const delivery = (await t.api('POST', `/api/v1/webhooks/${webhook.id}/test`, { key: full })).json.data;
      const sequence = (await t.api('GET', '/api/v1/sequences', { key: full })).json.data[0];
      const suppression = (await t.api('POST', '/api/v1/suppressions', { key: full, body: { email: 'kept@suppressed.example' } })).json.data;
      a = { lead, call, runs: { queued, waiting }, webhook, delivery, sequence, suppression, outbox: await waitingEmail(t, workspaces.A.id, queued.id), reply: await repliedEmail(t, workspaces.A.id, queued.id) };
      const session = async (userId: string) => {
        const created = await createSession(t.database.db, userId, systemClock, { ip: '127.0.0.1', userAgent: 'matrix' });
        return { token: created.token, csrf: created.session.csrfToken };
      };
      const member = await t.database.db.transaction().execute((trx) => addMember(trx, workspaces.A.id, {
        name: 'Matrix Member', email: `member-${workspaces.A.id.slice(0, 8)}@example.com`, role: 'MEMBER', password: 'a long enough password',
      }, systemClock));
      sessions = { A: await session(workspaces.A.adminUserId), B: await session(workspaces.B.adminUserId), memberA: await session(member.id) };
    });
    after(() => t?.close());

    const send = (route: RouteEntry, headers: Record<string, string>, runId = a.runs.queued.id, resources = a): Promise<ApiResponse> => {
      const body = bodyFor(route, resources);
      return t.api(route.method, pathFor(route, resources, runId), { headers, ...(body !== undefined ? { body } : {}) });
    };
    /**
     * What an erasure that is allowed aims at: a lead with a call of its own, made for it, so that A's resources stay
     * for the cells after it. A refused erasure aims at A's resources themselves, and must leave them as they were.
     */
    const disposable = async (): Promise<Resources> => {
      const full = keys.get(`A:${ALL_SCOPES.join(',')}`)!.active;
      const lead = await createLead(t, full, { name: 'Matrix disposable' });
      const webhook = (await t.api('POST', '/api/v1/webhooks', { key: full, body: { url: 'https://93.184.215.14/disposable' } })).json;
      const sequence = (await t.api('POST', '/api/v1/sequences', { key: full, body: bodyFor({ method: 'POST', url: '/api/v1/sequences' } as RouteEntry, a) })).json.data;
      const suppression = (await t.api('POST', '/api/v1/suppressions', { key: full, body: { email: `gone-${lead.id}@suppressed.example` } })).json.data;
      const outbox = await waitingEmail(t, workspaces.A.id, a.runs.queued.id);
      return { ...a, lead, call: await createCall(t, full, lead.id, { transcript: 'Matrix: goodbye' }), webhook, sequence, suppression, outbox };
    };
    /** After an allowed erasure: the disposable resource it aimed at is gone. */
    const assertErased = async (route: RouteEntry, resources: Resources, cell: string) => {
      const full = keys.get(`A:${ALL_SCOPES.join(',')}`)!.active;
      if (route.url === '/api/v1/suppressions/:id') {
        const left = await t.database.db.selectFrom('suppressions').select('id').where('id', '=', resources.suppression.id).execute();
        assert.deepEqual(left, [], `${cell}: the entry is gone`);
        return;
      }
      if (route.url === '/api/v1/outbox/:id') {
        const left = await t.database.db.selectFrom('email_deliveries').select('status').where('id', '=', resources.outbox).executeTakeFirstOrThrow();
        assert.equal(left.status, 'CANCELLED', `${cell}: the e-mail left the outbox unsent`);
        return;
      }
      if (route.url === '/api/v1/webhooks/:id') {
        assert.equal((await t.api('GET', `/api/v1/webhooks/${resources.webhook.id}`, { key: full })).status, 404, `${cell}: the endpoint is gone`);
        return;
      }
      if (route.url === '/api/v1/sequences/:id') {
        assert.equal((await t.api('GET', `/api/v1/sequences/${resources.sequence.id}`, { key: full })).status, 404, `${cell}: the sequence is gone`);
        return;
      }
      const calls = await t.api('GET', `/api/v1/leads/${resources.lead.id}/calls`, { key: full });
      if (route.url === '/api/v1/leads/:id') assert.equal(calls.status, 404, `${cell}: the lead is gone`);
      else assert.deepEqual(calls.json.data, [], `${cell}: the call is gone`);
    };
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const cookie = (s: { token: string; csrf: string }) => ({ cookie: `${SESSION_COOKIE}=${s.token}`, 'x-csrf-token': s.csrf });
    /** Whether a route aims at a resource of workspace A (by path or body) rather than at the caller's collection. */
    const aimsAtA = (route: RouteEntry) => route.url.includes(':') || JSON.stringify(bodyFor(route, a) ?? {}).includes(a.lead.id);

    it('covers every scoped route of the API', () => {
      const scoped = t.app.routeTable.filter((r) => r.scope);
      assert.ok(scoped.length >= 13, `${scoped.length} scoped routes`);
    });

    it('answers every route × scope × workspace × key state as it must, and a refusal changes nothing', async (c) => {
      const routes = t.app.routeTable.filter((r) => r.scope);
      const states: KeyState[] = ['active', 'revoked', 'unknown', 'malformed'];
      let cells = 0;
      /** The tables as the last checked cell left them: its "after" is the next cell's "before". */
      let known: Awaited<ReturnType<typeof fingerprint>> | null = null;
      for (const route of routes) {
        for (const workspace of ['A', 'B'] as const) {
          for (const scopes of SCOPE_SETS) {
            for (const state of states) {
              const pair = keys.get(`${workspace}:${scopes.join(',')}`)!;
              const key = state === 'active' ? pair.active : state === 'revoked' ? pair.revoked : state === 'unknown' ? generateKey() : `${pair.active.slice(0, -2)}!!`;
              const cell = `${label(route)} | ${workspace} | ${scopes.join(',')} | ${state}`;
              const erases = route.method === 'DELETE' && state === 'active' && (scopes as readonly string[]).includes(route.scope!) && workspace === 'A';
              const resources = erases ? await disposable() : a;
              const before = !erases && known ? known : await fingerprint(t.database.db, tables);
              known = null;
              const res = await send(route, bearer(key), a.runs.queued.id, resources);
              cells += 1;
              let refused = true;
              if (state !== 'active') {
                assertProblem(res, 401, 'unauthorized', cell);
                assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/, cell);
              } else if (!(scopes as readonly string[]).includes(route.scope!)) {
                assertProblem(res, 403, 'insufficient_scope', cell);
                assert.equal(res.json.requiredScope, route.scope, cell);
              } else if (missingDataScope(route, scopes)) {
                assertProblem(res, 403, 'insufficient_scope', cell);
                assert.equal(res.json.requiredScope, missingDataScope(route, scopes), cell);
              } else if (workspace === 'B' && aimsAtA(route)) {
                assertProblem(res, 404, 'not_found', cell);
              } else {
                // Allowed: a read answers 200; a change succeeds, or (a run decision) says the run's state forbids it.
                refused = false;
                if (route.method === 'GET') assert.equal(res.status, 200, `${cell}: ${res.text.slice(0, 300)}`);
                else if (erases) {
                  assert.equal(res.status, 204, `${cell}: ${res.text.slice(0, 300)}`);
                  await assertErased(route, resources, cell);
                } else assert.ok((res.status >= 200 && res.status < 300) || (res.status === 409 && res.json?.code === 'invalid_state'), `${cell}: ${res.status} ${res.text.slice(0, 300)}`);
                if (workspace === 'B') for (const id of [a.lead.id, a.call.id, a.runs.queued.id]) assert.ok(!res.text.includes(id), `${cell} does not show A's ${id}`);
              }
              if (refused || res.status === 409) {
                known = await fingerprint(t.database.db, tables);
                assertUnchanged(before, known, cell, route.method === 'GET' ? 0 : 1);
              }
            }
          }
        }
      }
      c.diagnostic(`${cells} cells`);
    });

    it('answers a signed-in person of the workspace like a full key, and of another workspace with 404', async () => {
      for (const route of t.app.routeTable.filter((r) => r.scope)) {
        const resources = route.method === 'DELETE' ? await disposable() : a;
        const own = await send(route, cookie(sessions.A), a.runs.waiting.id, resources);
        assert.ok(own.status < 300 || (own.status === 409 && own.json.code === 'invalid_state'), `${label(route)} as A's admin: ${own.status} ${own.text.slice(0, 200)}`);
        if (route.method === 'DELETE') await assertErased(route, resources, `${label(route)} as A's admin`);
        const before = await fingerprint(t.database.db, tables);
        const other = await send(route, cookie(sessions.B), a.runs.waiting.id);
        if (aimsAtA(route)) {
          assertProblem(other, 404, 'not_found', `${label(route)} as B's admin`);
          assertUnchanged(before, await fingerprint(t.database.db, tables), `${label(route)} as B's admin`, 1);
        } else {
          assert.ok(other.status < 300, `${label(route)} as B's admin: ${other.status}`);
          assert.ok(!other.text.includes(a.lead.id), `${label(route)} as B's admin does not show A's lead`);
        }
      }
    });

    it("keeps the web UI's own routes to signed-in people: every API key is 401, a member is 403 on admin routes", async () => {
      const uiRoutes = t.app.routeTable.filter((r) => r.access);
      assert.ok(uiRoutes.length > 0, 'the UI has routes that need a session');
      const fullKey = keys.get(`A:${ALL_SCOPES.join(',')}`)!.active;
      for (const route of uiRoutes) {
        const path = route.url.replace(':id', '00000000-0000-0000-0000-000000000000');
        const body = route.method === 'GET' ? {} : { body: {} };
        assertProblem(await t.api(route.method, path, { ...body, headers: bearer(fullKey) }), 401, 'unauthorized', `${label(route)} with a key`);
        assertProblem(await t.api(route.method, path, { ...body }), 401, 'unauthorized', `${label(route)} with nothing`);
        if (route.access === 'admin') {
          const before = await fingerprint(t.database.db, tables);
          const res = await t.api(route.method, path, { ...body, headers: cookie(sessions.memberA) });
          assert.equal(res.status, 403, `${label(route)} as a member: ${res.text.slice(0, 200)}`);
          assertProblem(res, 403, undefined, `${label(route)} as a member`);
          assertUnchanged(before, await fingerprint(t.database.db, tables), `${label(route)} as a member`, 1);
        }
      }
    });

    it("never replays another key's Idempotency-Key: the same key and body from workspace B creates B's own lead", async () => {
      const keyA = keys.get(`A:${ALL_SCOPES.join(',')}`)!.active;
      const keyB = keys.get(`B:${ALL_SCOPES.join(',')}`)!.active;
      const headers = { 'idempotency-key': `matrix-${Date.now()}` };
      const first = await t.api('POST', '/api/v1/leads', { key: keyA, body: { name: 'Same body' }, headers });
      const second = await t.api('POST', '/api/v1/leads', { key: keyB, body: { name: 'Same body' }, headers });
      assert.equal(first.status, 201);
      assert.equal(second.status, 201, second.text);
      assert.equal(second.headers.get('idempotent-replayed'), null);
      assert.notEqual(second.json.id, first.json.id);
      assertProblem(await t.api('GET', `/api/v1/leads/${first.json.id}`, { key: keyB }), 404, 'not_found');
    });

    describe('no mass assignment', () => {
      const full = () => keys.get(`A:${ALL_SCOPES.join(',')}`)!.active;
      const other = () => workspaces.B.id;
      const past = '2001-01-01T00:00:00.000Z';

      /** Sends `body`; expects 400 naming `field`, and no change anywhere (but the audit entry of the refusal). */
      async function refused(method: string, path: string, body: unknown, field: string): Promise<void> {
        const before = await fingerprint(t.database.db, tables);
        const res = await t.api(method, path, { key: full(), body });
        assertInvalid(res, [field], `${method} ${path} with ${field}`);
        assertUnchanged(before, await fingerprint(t.database.db, tables), `${method} ${path} with ${field}`, 1);
      }

      it('POST /api/v1/runs cannot set status, workspace, id, timestamps, tokens, draft, steps or who started it', async () => {
        const valid = { leadId: a.lead.id, callId: a.call.id };
        const extras: Record<string, unknown> = {
          status: 'COMPLETED', workspaceId: other(), id: '11111111-1111-4111-8111-111111111111', createdAt: past, startedAt: past,
          completedAt: past, tokensUsed: 0, emailDraft: { subject: 'x', body: 'y' }, steps: [], userId: workspaces.B.adminUserId,
          keyId: '11111111-1111-4111-8111-111111111111', traceUrl: 'https://evil.example', traceId: 'x',
        };
        for (const [field, value] of Object.entries(extras)) await refused('POST', '/api/v1/runs', { ...valid, [field]: value }, field);
      });

      it('POST and PATCH of a lead cannot set its id, workspace or timestamps', async () => {
        for (const [field, value] of Object.entries({ id: '22222222-2222-4222-8222-222222222222', workspaceId: other(), createdAt: past, updatedAt: past })) {
          await refused('POST', '/api/v1/leads', { name: 'Mallory', [field]: value }, field);
          await refused('PATCH', `/api/v1/leads/${a.lead.id}`, { name: 'Mallory', [field]: value }, field);
        }
        const lead = await t.api('GET', `/api/v1/leads/${a.lead.id}`, { key: full() });
        assert.equal(lead.json.data.id, a.lead.id);
        assert.equal(lead.json.data.createdAt, a.lead.createdAt);
      });

      it('a call cannot be given an id, a lead, a workspace or a creation time', async () => {
        for (const [field, value] of Object.entries({ id: '33333333-3333-4333-8333-333333333333', leadId: a.lead.id, workspaceId: other(), createdAt: past })) {
          await refused('POST', `/api/v1/leads/${a.lead.id}/calls`, { transcript: 'x', [field]: value }, field);
        }
      });

      it('approve, reject, cancel and deliver take no status, draft or workspace', async () => {
        const was = (await t.api('GET', `/api/v1/runs/${a.runs.waiting.id}`, { key: full() })).json.data;
        for (const action of ['approve', 'reject', 'cancel', 'deliver']) {
          for (const [field, value] of Object.entries({ status: 'COMPLETED', emailDraft: { status: 'APPROVED' }, workspaceId: other(), version: 9 })) {
            await refused('POST', `/api/v1/runs/${a.runs.waiting.id}/${action}`, { [field]: value }, field);
          }
        }
        const run = await t.api('GET', `/api/v1/runs/${a.runs.waiting.id}`, { key: full() });
        assert.deepEqual(run.json.data, was, 'the run is as it was');
      });

      it("a draft edit takes no status, version, origin, editor, verdict, id or workspace", async () => {
        const was = (await t.api('GET', `/api/v1/runs/${a.runs.waiting.id}`, { key: full() })).json.data;
        const extras = {
          status: 'APPROVED', version: 9, origin: 'generated', editedAt: past, editedBy: { type: 'user', id: workspaces.B.adminUserId },
          grounding: { verdict: 'grounded', unsupported: [] }, id: '44444444-4444-4444-8444-444444444444', workspaceId: other(), runId: a.runs.queued.id,
        };
        for (const [field, value] of Object.entries(extras)) {
          await refused('PATCH', `/api/v1/runs/${a.runs.waiting.id}/draft`, { subject: 'Mallory', [field]: value }, field);
        }
        const run = await t.api('GET', `/api/v1/runs/${a.runs.waiting.id}`, { key: full() });
        assert.deepEqual(run.json.data, was, 'the run and its draft are as they were');
      });

      it('a prototype-polluting body is refused and pollutes nothing', async () => {
        const before = await fingerprint(t.database.db, tables);
        for (const raw of ['{"name":"x","__proto__":{"workspaceId":"evil","admin":true}}', '{"name":"x","constructor":{"prototype":{"admin":true}}}']) {
          const res = await t.api('POST', '/api/v1/leads', { key: full(), raw, headers: { 'content-type': 'application/json' } });
          assertProblem(res, 400, 'invalid_request', raw);
        }
        assert.equal(({} as Record<string, unknown>).admin, undefined, 'Object.prototype is untouched');
        assertUnchanged(before, await fingerprint(t.database.db, tables), 'prototype pollution', 2);
      });

      it("the UI's mail settings and profile forms cannot set a workspace, who changed them, a stored password or a role", async () => {
        const admin = cookie(sessions.A);
        const smtp = { host: 'smtp.matrix.test', port: 587, security: 'starttls' };
        const cases: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
          ['PUT', '/ui/api/settings/email', { fromName: 'Matrix' }, {
            workspaceId: other(), updatedAt: past, updatedByUserId: workspaces.B.adminUserId, installation: { smtp: null, from: null },
          }],
          ['PUT', '/ui/api/settings/email', { smtp }, { 'smtp.passwordSet': true, 'smtp.passwordCiphertext': 'v1:AAAA', 'smtp.workspaceId': other() }],
          ['PATCH', '/ui/api/profile', { signature: 'Matrix' }, { email: 'evil@example.com', role: 'ADMIN', id: workspaces.B.adminUserId, workspaceId: other(), passwordHash: 'x' }],
        ];
        for (const [method, path, valid, extras] of cases) {
          for (const [field, value] of Object.entries(extras)) {
            const [outer, inner] = field.split('.');
            const body = inner ? { ...valid, [outer!]: { ...(valid[outer!] as object), [inner]: value } } : { ...valid, [field]: value };
            const before = await fingerprint(t.database.db, tables);
            const res = await t.api(method, path, { body, headers: admin });
            assertInvalid(res, [field], `${method} ${path} with ${field}`);
            assertUnchanged(before, await fingerprint(t.database.db, tables), `${method} ${path} with ${field}`, 1);
          }
        }
      });

      it("the UI's key, member and IMAP check forms cannot set a workspace, an id, a prefix, a creator or a digest", async () => {
        const admin = cookie(sessions.A);
        const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
          ['/ui/api/keys', { name: 'k', scopes: ['leads:read'] }, { workspaceId: other(), id: '44444444-4444-4444-8444-444444444444', prefix: 'sk_evil', createdBy: workspaces.B.adminUserId, digest: 'x', key: generateKey(), revokedAt: null }],
          ['/ui/api/members', { name: 'M', email: 'm@example.com', role: 'MEMBER', password: 'a long enough password' }, { workspaceId: other(), id: '55555555-5555-4555-8555-555555555555', createdAt: past, passwordHash: 'x' }],
          // The IMAP check reads the saved password of the caller's own workspace only.
          ['/ui/api/settings/email/check-imap', {}, { workspaceId: other(), passwordSet: true, allowPrivateHosts: true, ca: 'x' }],
        ];
        for (const [path, valid, extras] of cases) {
          for (const [field, value] of Object.entries(extras)) {
            const before = await fingerprint(t.database.db, tables);
            const res = await t.api('POST', path, { body: { ...valid, [field]: value }, headers: { ...admin, origin: t.url } });
            assertInvalid(res, [field], `${path} with ${field}`);
            assertUnchanged(before, await fingerprint(t.database.db, tables), `${path} with ${field}`, 1);
          }
        }
      });
    });
  });
}
