// Webhooks (DESIGN §9) on both backends, with real receivers on loopback: endpoints made, read, changed and removed
// through the API (secret shown once, scopes, other workspaces, bad input); a run's events arrive in order with
// Standard Webhooks signatures that verify; a 500 is retried until it succeeds; replay; the test event; secret
// roll-over signs with both secrets; three days of failure disable the endpoint (a manual clock); private addresses
// are refused; a hanging receiver times out; a huge answer is cut to the excerpt.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ManualClock, systemClock, type Clock } from '../../src/clock.ts';
import type { Config } from '../../src/config.ts';
import { checkEndpointUrl } from '../../src/domain/webhooks/endpoints.ts';
import { webhookHandler } from '../../src/jobs/handlers/webhook-deliver.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { addMember } from '../../src/domain/members/users.ts';
import { createSession } from '../../src/domain/members/sessions.ts';
import { SESSION_COOKIE } from '../../src/http/auth.ts';
import { assertInvalid, assertProblem, createCall, createLead, startRun, UUID } from './support.ts';
import { eventually } from '../worker/support.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** Verifies as a receiver would, with the standardwebhooks package: the signature, and a timestamp within 5 minutes. */
function verify(secret: string, request: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

const signaturesOf = (r: ReceivedWebhook) => String(r.headers['webhook-signature']).split(' ');

for (const kind of BACKENDS) {
  describe(`webhooks (${kind})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    const runners: JobRunner[] = [];
    let workspaceId: string;
    let key: string;

    async function startRunner(options: { clock?: Clock; config?: Partial<Config>; retryDelaysMs?: number[]; timeoutMs?: number } = {}) {
      const runner = new JobRunner({
        database: t.database, clock: options.clock ?? systemClock, config: { ...t.deps.config, ...options.config }, secrets: t.deps.secrets, cpu: t.deps.cpu,
        logger: silentLogger,
        // A receiver's answer may take seconds on a loaded machine: only the tests of time-outs set a short one.
        handlers: [webhookHandler({ leaseMs: 20_000, retryDelaysMs: options.retryDelaysMs ?? [50, 50, 50], timeoutMs: options.timeoutMs ?? 10_000 })],
        pollMs: 30, drainMs: 500,
      });
      await runner.start();
      runners.push(runner);
      return runner;
    }
    async function stopRunners() {
      for (const runner of runners.splice(0)) await runner.stop();
    }
    const create = (body: Record<string, unknown>, as = key) => t.api('POST', '/api/v1/webhooks', { key: as, body });
    const deliveries = async (endpointId: string) => (await t.api('GET', `/api/v1/webhooks/${endpointId}/deliveries?limit=100`, { key })).json.data;

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true } });
      const ws = await t.workspace('pro');
      workspaceId = ws.id;
      key = (await t.key(ws.id, ['leads:read', 'leads:write', 'runs:read', 'runs:write', 'webhooks:read', 'webhooks:write'])).key;
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await stopRunners();
      await receiver?.close();
      await t?.close();
    });

    it('makes, reads, changes and removes an endpoint; the secret is shown once; every change is audited', async () => {
      const res = await create({ url: receiver.url, description: ' CRM sync ', events: ['lead.created', 'run.completed'] });
      assert.equal(res.status, 201, res.text);
      assert.match(res.json.id, UUID);
      assert.match(res.json.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(res.json.secret.slice(6), 'base64').length, 32);
      assert.equal(res.json.description, 'CRM sync');
      assert.deepEqual(res.json.events, ['lead.created', 'run.completed']);
      assert.equal(res.json.enabled, true);
      assert.equal(res.headers.get('location'), `/api/v1/webhooks/${res.json.id}`);

      const one = await t.api('GET', `/api/v1/webhooks/${res.json.id}`, { key });
      assert.equal(one.status, 200);
      assert.equal(one.json.data.secret, undefined);
      assert.ok(!one.text.includes(res.json.secret.slice(6)), 'the secret is never shown again');
      const list = await t.api('GET', '/api/v1/webhooks', { key });
      assert.ok(list.json.data.some((e: any) => e.id === res.json.id));
      assert.ok(!list.text.includes('whsec_'));
      // Stored sealed, not as it was shown.
      const stored = await t.database.db.selectFrom('webhook_endpoints').select('secret').where('id', '=', res.json.id).executeTakeFirstOrThrow();
      assert.ok(!stored.secret.includes(res.json.secret.slice(6)));

      const patched = await t.api('PATCH', `/api/v1/webhooks/${res.json.id}`, { key, body: { events: [], enabled: false } });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.json.data.events, []);
      assert.equal(patched.json.data.enabled, false);
      assert.equal(patched.json.data.disabledReason, 'Disabled by an admin.');
      const enabled = await t.api('PATCH', `/api/v1/webhooks/${res.json.id}`, { key, body: { enabled: true } });
      assert.equal(enabled.json.data.enabled, true);
      assert.equal(enabled.json.data.disabledReason, null);

      assert.equal((await t.api('DELETE', `/api/v1/webhooks/${res.json.id}`, { key })).status, 204);
      assertProblem(await t.api('GET', `/api/v1/webhooks/${res.json.id}`, { key }), 404, 'not_found');
      const actions = (await t.database.db.selectFrom('audit_log').select('action').where('workspace_id', '=', workspaceId)
        .where('target_id', '=', res.json.id).execute()).map((r) => r.action).sort();
      assert.deepEqual(actions, ['webhook.created', 'webhook.deleted', 'webhook.updated', 'webhook.updated']);
    });

    it('refuses bad input with 400 naming the field, and never answers 500', async () => {
      for (const [url, pattern] of [
        ['ftp://example.com/hook', /http or https/],
        ['https://user:pw@example.com/hook', /user name or password/],
        ['not a url', /not a URL/],
        ['https://does-not-exist.invalid/hook', /does not resolve/],
      ] as const) {
        const res = await create({ url });
        assertInvalid(res, ['url'], url);
        assert.match(res.json.errors[0].message, pattern, url);
      }
      assertInvalid(await create({ url: receiver.url, events: ['lead.exploded'] }), ['events[0]'], 'unknown event');
      assertInvalid(await create({ url: receiver.url, bogus: 1 }), ['bogus'], 'unknown field');
      assertInvalid(await create({}), ['url'], 'no url');
      assertInvalid(await create({ url: `https://example.com/${'a'.repeat(3000)}` }), ['url']);
    });

    it('needs the webhooks scopes (403), and another workspace\'s endpoint is not found (404)', async () => {
      const readOnly = (await t.key(workspaceId, ['webhooks:read'])).key;
      const leadsOnly = (await t.key(workspaceId, ['leads:read', 'leads:write'])).key;
      const made = await create({ url: receiver.url, events: ['lead.deleted'] });
      assertProblem(await create({ url: receiver.url }, readOnly), 403, 'insufficient_scope');
      assertProblem(await t.api('GET', '/api/v1/webhooks', { key: leadsOnly }), 403, 'insufficient_scope');
      assert.equal((await t.api('GET', '/api/v1/webhooks', { key: readOnly })).status, 200);
      assertProblem(await t.api('POST', `/api/v1/webhooks/${made.json.id}/test`, { key: readOnly }), 403, 'insufficient_scope');
      assertProblem(await t.api('GET', '/api/v1/webhooks', {}), 401, 'unauthorized');

      const other = await t.workspace('pro');
      const otherKey = (await t.key(other.id, ['webhooks:read', 'webhooks:write'])).key;
      for (const [method, path] of [
        ['GET', `/api/v1/webhooks/${made.json.id}`], ['PATCH', `/api/v1/webhooks/${made.json.id}`], ['DELETE', `/api/v1/webhooks/${made.json.id}`],
        ['GET', `/api/v1/webhooks/${made.json.id}/deliveries`], ['POST', `/api/v1/webhooks/${made.json.id}/test`],
        ['POST', `/api/v1/webhooks/${made.json.id}/rotate-secret`], ['GET', '/api/v1/webhooks/not-a-uuid'],
      ] as const) {
        const res = await t.api(method, path, { key: otherKey, ...(method === 'PATCH' ? { body: { enabled: false } } : {}) });
        assertProblem(res, 404, 'not_found', `${method} ${path}`);
      }
      assert.deepEqual((await t.api('GET', '/api/v1/webhooks', { key: otherKey })).json.data, []);
      await t.api('DELETE', `/api/v1/webhooks/${made.json.id}`, { key });
    });

    it('delivers a run\'s events in order, signed so that standardwebhooks verifies them, after retrying a 500', async () => {
      await startRunner();
      const worker = await t.startWorker();
      const endpoint = (await create({ url: receiver.url })).json;
      const lead = await createLead(t, key, { name: 'Grace Hopper', email: 'grace@example.net', companyName: 'Navy' });
      const call = await createCall(t, key, lead.id);
      // The first run event is answered 500 once: the ones after it wait for it rather than overtake it.
      let failedOnce = false;
      receiver.answer = (r) => {
        if (r.json?.type === 'run.started' && !failedOnce) { failedOnce = true; return { status: 500, body: 'try later' }; }
        return { status: 204 };
      };
      const run = await startRun(t, key, lead.id, call.id);
      await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL');
      await receiver.next((r) => r.json?.type === 'run.awaiting_approval' && r.json.data.id === run.id);
      assert.equal((await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: {} })).status, 200);
      const completed = await receiver.next((r) => r.json?.type === 'run.completed' && r.json.data.id === run.id);
      assert.equal(completed.json.data.status, 'COMPLETED');
      assert.match(completed.json.data.traceUrl, /\/runs\/.+\/trace$/);
      assert.equal(completed.json.data.traceId, undefined);

      // Delivery is at least once: on a loaded machine, a 204 that comes back after the sender's timeout is sent
      // again, with the same webhook-id, for the receiver to drop as it would. Those repeats are left out here; the
      // retry of the first run.started (answered 500) is not one. An event sent twice under two ids would stay in.
      const answered = new Set<string>();
      const ofRun = receiver.received
        .filter((r) => r.json?.data?.id === run.id || r.json?.data?.runId === run.id)
        .filter((r, i) => {
          const id = String(r.headers['webhook-id']);
          if (answered.has(id)) return false;
          if (i > 0) answered.add(id);
          return true;
        });
      const types = ofRun.map((r) => r.json.type);
      assert.deepEqual(types, [
        'run.started', 'run.started', 'run.step_completed', 'run.step_completed', 'run.step_completed', 'run.step_completed',
        'run.awaiting_approval', 'run.completed',
      ]);
      // The retry is the same message: same id, and a body that verifies.
      assert.equal(ofRun[0]!.headers['webhook-id'], ofRun[1]!.headers['webhook-id']);
      for (const r of ofRun) {
        const verified = verify(endpoint.secret, r) as any;
        assert.equal(verified.type, r.json.type);
        assert.equal(r.headers['content-type'], 'application/json');
        assert.match(String(r.headers['user-agent']), /^leadrun-webhooks\//);
        assert.match(r.json.timestamp, /^\d{4}-\d{2}-\d{2}T/);
      }
      const created = await receiver.next((r) => r.json?.type === 'lead.created' && r.json.data.id === lead.id);
      assert.equal(created.json.data.email, 'grace@example.net');
      verify(endpoint.secret, created);
      assert.throws(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, created));

      const log = await deliveries(endpoint.id);
      const startedDelivery = log.find((d: any) => d.eventType === 'run.started');
      assert.equal(startedDelivery.status, 'SUCCEEDED');
      assert.equal(startedDelivery.attempts, 2);
      assert.equal(startedDelivery.lastStatus, 204);
      const attempts = await t.database.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', startedDelivery.id).orderBy('attempt').execute();
      assert.deepEqual(attempts.map((a) => [a.attempt, a.status_code, a.response_excerpt]), [[1, 500, 'try later'], [2, 204, '']]);
      await worker.stop();
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
      receiver.answer = () => ({ status: 204 });
    });

    it('replays a delivery with the same webhook-id, sends a test event, and pages the log', async () => {
      const endpoint = (await create({ url: receiver.url, events: ['lead.updated'] })).json;
      const test = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
      assert.equal(test.status, 202, test.text);
      assert.equal(test.json.data.eventType, 'webhook.test');
      const got = await receiver.next((r) => r.json?.type === 'webhook.test' && r.json.data.endpointId === endpoint.id);
      verify(endpoint.secret, got);

      const replay = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/deliveries/${test.json.data.id}/retry`, { key });
      assert.equal(replay.status, 202, replay.text);
      assert.notEqual(replay.json.data.id, test.json.data.id);
      assert.equal(replay.json.data.eventId, test.json.data.eventId);
      await eventually('the replay', async () =>
        receiver.received.filter((r) => r.headers['webhook-id'] === test.json.data.eventId).length === 2);
      assertProblem(await t.api('POST', `/api/v1/webhooks/${endpoint.id}/deliveries/${crypto.randomUUID()}/retry`, { key }), 404, 'not_found');

      const first = await t.api('GET', `/api/v1/webhooks/${endpoint.id}/deliveries?limit=1`, { key });
      assert.equal(first.json.data.length, 1);
      assert.equal(first.json.data[0].id, replay.json.data.id);
      const link = first.headers.get('link');
      assert.match(String(link), /rel="next"/);
      const second = await t.api('GET', String(link).slice(1, String(link).indexOf('>')), { key });
      assert.equal(second.json.data[0].id, test.json.data.id);
      assertInvalid(await t.api('GET', `/api/v1/webhooks/${endpoint.id}/deliveries?cursor=forged`, { key }), ['cursor']);

      // Only lead.updated is sent to it: a new lead is not.
      const lead = await createLead(t, key, { name: 'Filtered' });
      await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, body: { companyName: 'Filtered Inc' } });
      const updated = await receiver.next((r) => r.json?.type === 'lead.updated' && r.json.data.id === lead.id);
      assert.equal(updated.json.data.companyName, 'Filtered Inc');
      assert.ok(!(await deliveries(endpoint.id)).some((d: any) => d.eventType === 'lead.created'));
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('does not send a queued delivery whose endpoint may no longer read its event, however it was queued', async () => {
      await stopRunners();
      const endpoint = (await create({ url: receiver.url, events: ['lead.updated'] })).json;
      const lead = await createLead(t, key, { name: 'Narrowed' });
      await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, body: { companyName: 'Narrowed Inc' } });
      // The endpoint loses leads:read once the delivery is queued: as when a key without it changes the endpoint while
      // an attempt is under way, which the change's own withholding cannot stop, and the attempt then fails.
      await t.database.db.updateTable('webhook_endpoints').set({ read_scopes: ['runs:read'] }).where('id', '=', endpoint.id).execute();
      await startRunner();
      await eventually('the delivery refused', async () => (await deliveries(endpoint.id)).some((d: any) => d.status === 'FAILED'));
      const [delivery] = await deliveries(endpoint.id);
      assert.equal(delivery.eventType, 'lead.updated');
      assert.equal(delivery.attempts, 0);
      assert.match(delivery.lastError, /may no longer receive lead\.updated events \(they need leads:read\)/);
      assert.ok(!receiver.received.some((r) => r.json?.type === 'lead.updated' && r.json.data.id === lead.id));
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('rolls the secret: for 24 hours both the new and the previous secret sign', async () => {
      const endpoint = (await create({ url: receiver.url, events: ['lead.deleted'] })).json;
      const rolled = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/rotate-secret`, { key });
      assert.equal(rolled.status, 200, rolled.text);
      assert.notEqual(rolled.json.secret, endpoint.secret);
      assert.ok(Date.parse(rolled.json.previousSecretExpiresAt) - Date.now() > 23 * 3_600_000);
      const test = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
      const got = await receiver.next((r) => r.headers['webhook-id'] === test.json.data.eventId);
      assert.equal(signaturesOf(got).length, 2);
      verify(rolled.json.secret, got);
      verify(endpoint.secret, got);
      // After the overlap, the previous secret no longer signs.
      await t.database.db.updateTable('webhook_endpoints').set({ previous_secret_expires_at: new Date(Date.now() - 1000) }).where('id', '=', endpoint.id).execute();
      const later = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
      const gotLater = await receiver.next((r) => r.headers['webhook-id'] === later.json.data.eventId);
      assert.equal(signaturesOf(gotLater).length, 1);
      verify(rolled.json.secret, gotLater);
      assert.throws(() => verify(endpoint.secret, gotLater));
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('times out a receiver that hangs, and keeps only the first 1 KB of a 10 MB answer', async () => {
      // Its runner gives up after 0.3 s, and its receiver hangs: whatever happens here, neither is left to the next test.
      try {
        const endpoint = (await create({ url: receiver.url, events: ['lead.deleted'] })).json;
        receiver.answer = (r) => (r.json?.type === 'webhook.test' && receiver.received.filter((x) => x.json?.type === 'webhook.test').length % 2 === 1 ? 'hang' : 'huge');
        await stopRunners();
        await startRunner({ retryDelaysMs: [], timeoutMs: 300 }); // one attempt each
        const hung = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
        const started = Date.now();
        const failed = await eventually('the timeout', async () => {
          const d = (await deliveries(endpoint.id)).find((x: any) => x.id === hung.json.data.id);
          return d?.status === 'FAILED' ? d : undefined;
        });
        assert.ok(Date.now() - started < 5_000);
        assert.equal(failed.lastStatus, null);
        assert.match(failed.lastError, /No answer within 0.3 s/);

        // 0.3 s is a test's hang, not a loaded machine's time to answer with 10 MB: the huge answer gets 5 s.
        await stopRunners();
        await startRunner({ retryDelaysMs: [], timeoutMs: 5_000 });
        const huge = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
        const done = await eventually('the huge answer', async () => {
          const d = (await deliveries(endpoint.id)).find((x: any) => x.id === huge.json.data.id);
          return d?.status === 'SUCCEEDED' ? d : undefined;
        });
        assert.equal(done.lastStatus, 200);
        assert.ok(done.lastResponseExcerpt.length <= 1024 && done.lastResponseExcerpt.length >= 1000, String(done.lastResponseExcerpt.length));
        await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
      } finally {
        receiver.answer = () => ({ status: 204 });
        await stopRunners();
      }
    });

    it('refuses private addresses without ALLOW_PRIVATE_HOSTS, when made and when delivering', async () => {
      for (const url of ['http://127.0.0.1:9/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest', 'http://localhost/hook', 'http://10.1.2.3/']) {
        await assert.rejects(checkEndpointUrl(url, false), (e: any) => e.code === 'invalid_request' && e.errors[0].field === 'url' && /address/.test(e.errors[0].message), url);
        await checkEndpointUrl(url, true).catch((e) => assert.fail(`${url}: ${e.message}`));
      }
      // An endpoint made while private hosts were allowed is not reached by a worker that does not allow them.
      const endpoint = (await create({ url: receiver.url, events: ['lead.deleted'] })).json;
      await startRunner({ config: { allowPrivateHosts: false }, retryDelaysMs: [] });
      const before = receiver.received.length;
      const test = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
      const failed = await eventually('the refusal', async () => {
        const d = (await deliveries(endpoint.id)).find((x: any) => x.id === test.json.data.id);
        return d?.status === 'FAILED' ? d : undefined;
      });
      assert.match(failed.lastError, /127\.0\.0\.1.*loopback.*ALLOW_PRIVATE_HOSTS/);
      assert.equal(receiver.received.length, before);
      await stopRunners();
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('disables an endpoint that has failed for three days, and says why', async () => {
      // A second ahead of the API's clock, so that what the API queues now is due for this runner.
      const clock = new ManualClock(new Date(Date.now() + 1000));
      const endpoint = (await create({ url: receiver.url, events: ['lead.deleted'] })).json;
      receiver.answer = () => ({ status: 503, body: 'down for maintenance' });
      const day = 24 * 3_600_000;
      await startRunner({ clock, retryDelaysMs: [day, day, day, day, day] });
      const test = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
      for (let attempt = 1; attempt <= 4; attempt++) {
        await eventually(`attempt ${attempt}`, async () => {
          const d = (await deliveries(endpoint.id)).find((x: any) => x.id === test.json.data.id);
          return d?.attempts === attempt ? d : undefined;
        });
        if (attempt < 4) {
          const state = (await t.api('GET', `/api/v1/webhooks/${endpoint.id}`, { key })).json.data;
          assert.equal(state.enabled, true, `still enabled after ${attempt} failures`);
          assert.ok(state.failingSince);
          clock.advance(day + 1000);
        }
      }
      const state = (await t.api('GET', `/api/v1/webhooks/${endpoint.id}`, { key })).json.data;
      assert.equal(state.enabled, false);
      assert.match(state.disabledReason, /failed for 3 days.*503/);
      // Nothing more is sent to it; enabling it again clears the failures.
      clock.advance(day + 1000);
      const last = await eventually('the pending delivery ends', async () => {
        const d = (await deliveries(endpoint.id)).find((x: any) => x.id === test.json.data.id);
        return d?.status === 'FAILED' ? d : undefined;
      });
      assert.equal(last.attempts, 4);
      assertProblem(await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key }), 409, 'invalid_state');
      const enabled = await t.api('PATCH', `/api/v1/webhooks/${endpoint.id}`, { key, body: { enabled: true } });
      assert.equal(enabled.json.data.failingSince, null);
      receiver.answer = () => ({ status: 204 });
      await stopRunners();
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('a lead\'s erasure erases the events that carry its data and sends lead.deleted with its id alone', async () => {
      const endpoint = (await create({ url: receiver.url, events: ['lead.created', 'lead.deleted'] })).json;
      const lead = await createLead(t, key, { name: 'To Be Forgotten', email: 'forget@example.net' });
      assert.equal(await countEvents(lead.id), 1);
      assert.equal((await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key })).status, 204);
      assert.equal(await countEvents(lead.id), 0);
      const events = await t.database.db.selectFrom('webhook_events').select(['type', 'payload']).where('type', '=', 'lead.deleted').execute();
      const payload = events.map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload)).find((p: any) => p.data.id === lead.id);
      assert.deepEqual(payload.data, { id: lead.id });
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('a member\'s session may not manage webhooks; an admin\'s may', async () => {
      const member = await t.database.db.transaction().execute((trx) => addMember(trx, workspaceId, {
        name: 'Hook Member', email: `hook-member-${workspaceId.slice(0, 8)}@example.com`, role: 'MEMBER', password: 'a long enough password',
      }, systemClock));
      const session = async (userId: string) => {
        const created = await createSession(t.database.db, userId, systemClock, { ip: '127.0.0.1', userAgent: 'webhooks' });
        return { cookie: `${SESSION_COOKIE}=${created.token}`, 'x-csrf-token': created.session.csrfToken };
      };
      const asMember = await session(member.id);
      assertProblem(await t.api('GET', '/api/v1/webhooks', { headers: asMember }), 403, 'forbidden');
      assertProblem(await t.api('POST', '/api/v1/webhooks', { headers: asMember, body: { url: receiver.url } }), 403, 'forbidden');
      const admin = (await t.database.db.selectFrom('workspaces').select('admin_user_id').where('id', '=', workspaceId).executeTakeFirstOrThrow()).admin_user_id!;
      const asAdmin = await session(admin);
      const made = await t.api('POST', '/api/v1/webhooks', { headers: asAdmin, body: { url: receiver.url } });
      assert.equal(made.status, 201, made.text);
      assert.equal((await t.api('GET', '/api/v1/webhooks', { headers: asAdmin })).status, 200);
      assert.equal((await t.api('DELETE', `/api/v1/webhooks/${made.json.id}`, { headers: asAdmin })).status, 204);
    });

    async function countEvents(leadId: string): Promise<number> {
      const row = await t.database.db.selectFrom('webhook_events').select((eb) => eb.fn.countAll<number>().as('n')).where('lead_id', '=', leadId).executeTakeFirstOrThrow();
      return Number(row.n);
    }
  });
}
