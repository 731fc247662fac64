// Webhooks send only what the endpoint's maker may read (issue 38), on both backends: a key without leads:read or
// runs:read is refused (403 naming the scope) an endpoint for the events of that data, and for every event; fan-out
// never sends an endpoint a type outside its read scopes; a key may not point an endpoint elsewhere that receives what
// it cannot read, and its pending deliveries outside the key's scopes are not sent; replay and the test event; the
// UI and the command line (an admin) keep every type; migration 0023 narrows the endpoints that keys made.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { systemClock } from '../../src/clock.ts';
import { createSession } from '../../src/domain/members/sessions.ts';
import { SESSION_COOKIE } from '../../src/http/auth.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertProblem, createCall, createLead, startRun } from './support.ts';

const HOOK = 'https://93.184.215.14/hook';

for (const kind of BACKENDS) {
  describe(`webhook read scopes (${kind})`, () => {
    let t: TestApp;
    let workspaceId: string;
    let full: string;
    let hooksOnly: string;
    let hooksAndLeads: string;
    let hooksAndRuns: string;
    let asAdmin: Record<string, string>;

    before(async () => {
      t = await startTestApp(kind);
      const ws = await t.workspace('pro');
      workspaceId = ws.id;
      full = (await t.key(ws.id)).key;
      hooksOnly = (await t.key(ws.id, ['webhooks:read', 'webhooks:write'], 'hooks only')).key;
      hooksAndLeads = (await t.key(ws.id, ['webhooks:read', 'webhooks:write', 'leads:read'], 'hooks and leads')).key;
      hooksAndRuns = (await t.key(ws.id, ['webhooks:read', 'webhooks:write', 'runs:read'], 'hooks and runs')).key;
      const session = await createSession(db(), ws.adminUserId, systemClock, { ip: '127.0.0.1', userAgent: 'scopes' });
      asAdmin = { cookie: `${SESSION_COOKIE}=${session.token}`, 'x-csrf-token': session.session.csrfToken };
    });
    after(() => t?.close());

    const db = () => t.database.db;

    const create = (key: string, body: Record<string, unknown>) => t.api('POST', '/api/v1/webhooks', { key, body });
    const readScopesOf = async (id: string) => (await db().selectFrom('webhook_endpoints').select('read_scopes')
      .where('id', '=', id).executeTakeFirstOrThrow()).read_scopes;
    /** The event types queued for an endpoint, sorted. */
    const queuedTypes = async (endpointId: string, status?: 'PENDING') => (await db()
      .selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id').select('e.type')
      .where('d.endpoint_id', '=', endpointId).$if(status !== undefined, (q) => q.where('d.status', '=', status!))
      .execute()).map((r) => r.type).sort();
    const removeAll = () => db().deleteFrom('webhook_endpoints').where('workspace_id', '=', workspaceId).execute();

    it('refuses a key an endpoint for what it cannot read: 403 naming the scope, and nothing made', async () => {
      for (const [key, events, scope] of [
        [hooksOnly, undefined, 'leads:read'],
        [hooksOnly, [], 'leads:read'],
        [hooksOnly, ['lead.created'], 'leads:read'],
        [hooksOnly, ['run.completed'], 'runs:read'],
        [hooksOnly, ['draft.sent'], 'runs:read'],
        [hooksAndLeads, [], 'runs:read'],
        [hooksAndLeads, ['lead.updated', 'run.step_completed'], 'runs:read'],
        [hooksAndRuns, ['draft.replied', 'lead.deleted'], 'leads:read'],
      ] as const) {
        const res = await create(key, { url: HOOK, ...(events ? { events } : {}) });
        const context = `${JSON.stringify(events)} needs ${scope}`;
        assertProblem(res, 403, 'insufficient_scope', context);
        assert.equal(res.json.requiredScope, scope, context);
        assert.match(res.json.detail, new RegExp(scope), context);
      }
      assert.match((await create(hooksOnly, { url: HOOK })).json.detail, /every event type.*name the event types/);
      const { count } = await db().selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('count'))
        .where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
      assert.equal(Number(count), 0);
    });

    it('makes an endpoint for the types a key may read, and sends it nothing else', async () => {
      const leadsHook = await create(hooksAndLeads, { url: HOOK, events: ['lead.created', 'lead.updated'] });
      assert.equal(leadsHook.status, 201, leadsHook.text);
      assert.deepEqual(await readScopesOf(leadsHook.json.id), ['leads:read']);
      const runsHook = await create(hooksAndRuns, { url: HOOK, events: ['run.started', 'draft.sent'] });
      assert.equal(runsHook.status, 201, runsHook.text);
      assert.deepEqual(await readScopesOf(runsHook.json.id), ['runs:read']);
      // An endpoint that wants every type but holds one read scope (as migration 0023 leaves one a key made).
      const legacy = (await t.api('POST', '/api/v1/webhooks', { key: full, body: { url: HOOK } })).json;
      const narrow = (id: string, scopes: string[]) => db().updateTable('webhook_endpoints')
        .set({ read_scopes: scopes }).where('id', '=', id).execute();
      await narrow(legacy.id, ['leads:read']);
      const none = (await t.api('POST', '/api/v1/webhooks', { key: full, body: { url: HOOK } })).json;
      await narrow(none.id, []);

      const lead = await createLead(t, full, { name: 'Grace Hopper', email: 'grace@example.net' });
      await startRun(t, full, lead.id, (await createCall(t, full, lead.id)).id);
      // Imported leads are announced in one statement of their own.
      const imported = await t.api('POST', '/api/v1/leads/import', { key: full, body: { leads: [{ name: 'Imp' }] } });
      assert.equal(imported.status, 200, imported.text);

      assert.deepEqual(await queuedTypes(leadsHook.json.id), ['lead.created', 'lead.created']);
      assert.deepEqual(await queuedTypes(runsHook.json.id), ['run.started']);
      assert.deepEqual(await queuedTypes(legacy.id), ['lead.created', 'lead.created']);
      assert.deepEqual(await queuedTypes(none.id), []);
      await removeAll();
    });

    it('a key may not point elsewhere an endpoint receiving what it cannot read; its unreadable deliveries stay unsent',
      async () => {
      const admins = (await t.api('POST', '/api/v1/webhooks', { key: full, body: { url: HOOK } })).json;
      assert.deepEqual(await readScopesOf(admins.id), ['leads:read', 'runs:read']);
      const lead = await createLead(t, full, { name: 'Ada Lovelace' });
      await startRun(t, full, lead.id, (await createCall(t, full, lead.id)).id);
      assert.deepEqual(await queuedTypes(admins.id, 'PENDING'), ['lead.created', 'run.started']);

      const elsewhere = 'https://93.184.215.15/mallory';
      for (const [key, body, scope] of [
        [hooksOnly, { url: elsewhere }, 'leads:read'],
        [hooksAndLeads, { url: elsewhere }, 'runs:read'],
        [hooksOnly, { events: [] }, 'leads:read'],
        [hooksAndRuns, { events: ['lead.created'] }, 'leads:read'],
      ] as const) {
        const res = await t.api('PATCH', `/api/v1/webhooks/${admins.id}`, { key, body });
        assertProblem(res, 403, 'insufficient_scope', JSON.stringify(body));
        assert.equal(res.json.requiredScope, scope);
      }
      const unchanged = (await t.api('GET', `/api/v1/webhooks/${admins.id}`, { key: full })).json.data;
      assert.equal(unchanged.url, HOOK);
      assert.deepEqual(unchanged.events, []);
      // Neither where nor what: a key may still disable, enable and describe it.
      const described = await t.api('PATCH', `/api/v1/webhooks/${admins.id}`, {
        key: hooksOnly, body: { description: 'x', enabled: true },
      });
      assert.equal(described.status, 200, described.text);
      assert.deepEqual(await readScopesOf(admins.id), ['leads:read', 'runs:read']);

      // Setting both to what it may read is allowed; the run's pending delivery is then not sent to the new address.
      const moved = await t.api('PATCH', `/api/v1/webhooks/${admins.id}`, {
        key: hooksAndLeads, body: { url: elsewhere, events: ['lead.created'] },
      });
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual(await readScopesOf(admins.id), ['leads:read']);
      assert.deepEqual(await queuedTypes(admins.id, 'PENDING'), ['lead.created']);
      const failed = await db().selectFrom('webhook_deliveries').select('last_error')
        .where('endpoint_id', '=', admins.id).where('status', '=', 'FAILED').execute();
      assert.equal(failed.length, 1);
      assert.match(failed[0]!.last_error ?? '', /may not read these events/);

      // Replay: not an event it may no longer receive (409), but one it may; the test event needs no read scope.
      const deliveries = (await t.api('GET', `/api/v1/webhooks/${admins.id}/deliveries`, { key: full })).json.data;
      const runDelivery = deliveries.find((d: any) => d.eventType === 'run.started');
      const leadDelivery = deliveries.find((d: any) => d.eventType === 'lead.created');
      const retry = (deliveryId: string) => t.api('POST',
        `/api/v1/webhooks/${admins.id}/deliveries/${deliveryId}/retry`, { key: full });
      assertProblem(await retry(runDelivery.id), 409, 'invalid_state');
      assert.equal((await retry(leadDelivery.id)).status, 202);
      assert.equal((await t.api('POST', `/api/v1/webhooks/${admins.id}/test`, { key: hooksOnly })).status, 202);
      assert.deepEqual(await queuedTypes(admins.id, 'PENDING'), ['lead.created', 'lead.created', 'webhook.test']);

      // An admin sets it up anew for everything.
      const restored = await t.api('PATCH', `/api/v1/webhooks/${admins.id}`, { key: full, body: { events: [] } });
      assert.equal(restored.status, 200, restored.text);
      assert.deepEqual(await readScopesOf(admins.id), ['leads:read', 'runs:read']);
      await removeAll();
    });

    it('the UI (an admin) makes an endpoint for every type', async () => {
      const res = await t.api('POST', '/api/v1/webhooks', { headers: asAdmin, body: { url: HOOK } });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(await readScopesOf(res.json.id), ['leads:read', 'runs:read']);
      await removeAll();
    });

    it('migration 0023 leaves an endpoint that keys made or changed the read scopes every such key held', async () => {
      const byKey = (await create(hooksAndLeads, { url: HOOK, events: ['lead.created'] })).json;
      const byAdmin = (await create(full, { url: HOOK })).json;
      const changed = (await create(full, { url: HOOK })).json;
      // A change the audit log records, by a key of one read scope, before keys were checked.
      const touched = await t.api('PATCH', `/api/v1/webhooks/${changed.id}`, {
        key: hooksAndRuns, body: { enabled: true },
      });
      assert.equal(touched.status, 200);
      const viaUi = (await t.api('POST', '/api/v1/webhooks', { headers: asAdmin, body: { url: HOOK } })).json;
      await sql`ALTER TABLE webhook_endpoints DROP COLUMN read_scopes`.execute(db());
      const file = path.join(import.meta.dirname, '../../src/db/migrations/0023_webhook_scopes.sql');
      const script = (await readFile(file, 'utf8')).split('\n').filter((l) => !l.startsWith('--')).join('\n');
      for (const statement of script.split(';').map((s) => s.trim()).filter(Boolean)) {
        await sql.raw(statement).execute(db());
      }
      assert.deepEqual(await readScopesOf(byKey.id), ['leads:read']);
      assert.deepEqual(await readScopesOf(byAdmin.id), ['leads:read', 'runs:read']);
      assert.deepEqual(await readScopesOf(changed.id), ['runs:read']);
      assert.deepEqual(await readScopesOf(viaUi.id), ['leads:read', 'runs:read']);
      await removeAll();
    });
  });
}
