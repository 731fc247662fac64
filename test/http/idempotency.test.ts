// Idempotency-Key on POST: a repeat replays the first answer and creates nothing (nor counts against the Free
// plan); another body or endpoint is refused; keys belong to the calling API key; failures do not hold a key;
// concurrent repeats create one resource; the window is 24 hours.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { BACKENDS, startTestApp, TRANSCRIPT, type ApiResponse, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, countRows, createCall, createLead, db } from './support.ts';

const REPLAYED = 'idempotent-replayed';

function assertReplay(first: ApiResponse, replay: ApiResponse): void {
  assert.equal(first.headers.get(REPLAYED), null, 'the first answer is not a replay');
  assert.equal(replay.status, first.status, replay.text);
  assert.equal(replay.headers.get(REPLAYED), 'true');
  assert.deepEqual(replay.json, first.json, 'the same body');
  assert.equal(replay.headers.get('location'), first.headers.get('location'), 'the same Location');
  assert.match(replay.headers.get('content-type') ?? '', /^application\/json/);
  assert.notEqual(replay.headers.get('x-request-id'), first.headers.get('x-request-id'), 'a replay is a request of its own');
}

for (const kind of BACKENDS) {
  describe(kind, () => {
    const clock = new ManualClock('2026-05-20T10:00:00.000Z');
    let t: TestApp;
    let A: { id: string };
    let key: string;
    let key2: string;

    before(async () => {
      t = await startTestApp(kind, { clock, config: { freePlanMonthlyRuns: 1 } });
      A = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      key2 = (await t.key(A.id)).key;
    });
    after(() => t?.close());

    const leadsNamed = async (name: string) =>
      Number((await db(t).selectFrom('leads').select((eb) => eb.fn.countAll<string>().as('n')).where('name', '=', name).executeTakeFirstOrThrow()).n);
    const postLead = (body: unknown, idem: string, k = key) =>
      t.api('POST', '/api/v1/leads', { key: k, body, headers: { 'idempotency-key': idem } });

    it('replays a lead creation and creates nothing more', async () => {
      const idem = randomUUID();
      const body = { name: 'Once Only', companyName: 'Idem Co' };
      const first = await postLead(body, idem);
      assert.equal(first.status, 201, first.text);
      const replay = await postLead(body, idem);
      assertReplay(first, replay);
      assertReplay(first, await postLead(body, idem));
      assert.equal(await leadsNamed('Once Only'), 1);
    });

    it('replays the first answer as it was, even after the lead has changed', async () => {
      const idem = randomUUID();
      const first = await postLead({ name: 'Snapshot' }, idem);
      await t.api('PATCH', `/api/v1/leads/${first.json.id}`, { key, body: { name: 'Renamed' } });
      const replay = await postLead({ name: 'Snapshot' }, idem);
      assertReplay(first, replay);
      assert.equal(replay.json.name, 'Snapshot');
    });

    it('treats the same JSON written differently as the same request', async () => {
      const idem = randomUUID();
      const first = await postLead({ name: 'Spacing' }, idem);
      const replay = await t.api('POST', '/api/v1/leads', {
        key, raw: '{\n  "name" :   "Spacing"\n}', headers: { 'content-type': 'application/json', 'idempotency-key': idem },
      });
      assertReplay(first, replay);
      assert.equal(await leadsNamed('Spacing'), 1);
    });

    it('replays a call creation and creates nothing more', async () => {
      const lead = await createLead(t, key, { name: 'Caller' });
      const idem = randomUUID();
      const send = () => t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key, body: { transcript: TRANSCRIPT }, headers: { 'idempotency-key': idem } });
      const first = await send();
      assert.equal(first.status, 201, first.text);
      assertReplay(first, await send());
      const calls = await t.api('GET', `/api/v1/leads/${lead.id}/calls`, { key });
      assert.deepEqual(calls.json.data.map((c: any) => c.id), [first.json.id]);
    });

    it("replays a run start without counting it against a FREE workspace's monthly limit", async () => {
      const F = await t.workspace('free');
      const fKey = (await t.key(F.id)).key;
      const lead = await createLead(t, fKey);
      const call = await createCall(t, fKey, lead.id);
      const idem = randomUUID();
      const send = () => t.api('POST', '/api/v1/runs', { key: fKey, body: { leadId: lead.id, callId: call.id }, headers: { 'idempotency-key': idem } });
      const first = await send();
      assert.equal(first.status, 202, first.text);
      assertReplay(first, await send());
      assertReplay(first, await send());
      assert.equal(await countRows(t, 'runs', F.id), 1);
      const usage = await db(t).selectFrom('run_usage').select('runs').where('workspace_id', '=', F.id).executeTakeFirstOrThrow();
      assert.equal(usage.runs, 1, 'replays are not counted');
      // The one run of the month is used: a new start is refused, a replay still answers.
      assertProblem(await t.api('POST', '/api/v1/runs', { key: fKey, body: { leadId: lead.id, callId: call.id } }), 402, 'run_limit_reached');
      assertReplay(first, await send());
      assert.equal(await countRows(t, 'runs', F.id), 1);
    });

    it('refuses the same key with another body with 422 and creates nothing', async () => {
      const idem = randomUUID();
      assert.equal((await postLead({ name: 'First Body' }, idem)).status, 201);
      const res = await postLead({ name: 'Second Body' }, idem);
      assertProblem(res, 422, 'idempotency_key_reused');
      assert.equal(await leadsNamed('Second Body'), 0);
      assertProblem(await postLead({ name: 'First Body', companyName: 'Extra' }, idem), 422, 'idempotency_key_reused');
    });

    it('refuses the same key on another endpoint, or on the same route for another lead, with 422', async () => {
      const idem = randomUUID();
      const lead = (await postLead({ name: 'Endpoint' }, idem)).json;
      const other = await createLead(t, key, { name: 'Endpoint 2' });
      const body = { transcript: 'Ada: hello' };
      const res = await t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key, body, headers: { 'idempotency-key': idem } });
      assertProblem(res, 422, 'idempotency_key_reused');
      const idem2 = randomUUID();
      assert.equal((await t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key, body, headers: { 'idempotency-key': idem2 } })).status, 201);
      const elsewhere = await t.api('POST', `/api/v1/leads/${other.id}/calls`, { key, body, headers: { 'idempotency-key': idem2 } });
      assertProblem(elsewhere, 422, 'idempotency_key_reused');
      assert.deepEqual((await t.api('GET', `/api/v1/leads/${other.id}/calls`, { key })).json, { data: [] });
    });

    it('scopes keys to the calling API key: two API keys with one Idempotency-Key create two leads', async () => {
      const idem = randomUUID();
      const one = await postLead({ name: 'Per Key' }, idem, key);
      const two = await postLead({ name: 'Per Key' }, idem, key2);
      assert.equal(one.status, 201);
      assert.equal(two.status, 201);
      assert.equal(two.headers.get(REPLAYED), null);
      assert.notEqual(one.json.id, two.json.id);
      assert.equal(await leadsNamed('Per Key'), 2);
      // And another workspace's key with the same Idempotency-Key never sees this workspace's answer.
      const B = await t.workspace('pro');
      const three = await postLead({ name: 'Per Key' }, idem, (await t.key(B.id)).key);
      assert.equal(three.status, 201);
      assert.notEqual(three.json.id, one.json.id);
    });

    it('accepts keys of 1 to 255 visible characters and refuses others with 400', async () => {
      const max = 'k'.repeat(254) + randomUUID().slice(0, 1);
      const first = await postLead({ name: 'Long Key' }, max);
      assert.equal(first.status, 201, first.text);
      assertReplay(first, await postLead({ name: 'Long Key' }, max));
      for (const bad of ['k'.repeat(256), 'has space', '']) {
        assertInvalid(await postLead({ name: 'Bad Key' }, bad), ['Idempotency-Key'], `key of ${bad.length}`);
      }
      assert.equal(await leadsNamed('Bad Key'), 0);
    });

    it('does not hold a key for a request that failed: a fixed retry with the same key succeeds', async () => {
      const lead = await createLead(t, key, { name: 'Retry' });
      const call = await createCall(t, key, lead.id);
      const idem = randomUUID();
      const send = (body: unknown) => t.api('POST', '/api/v1/runs', { key, body, headers: { 'idempotency-key': idem } });
      const failed = await send({ leadId: randomUUID(), callId: call.id });
      assertProblem(failed, 404, 'not_found');
      const again = await send({ leadId: randomUUID(), callId: call.id });
      assertProblem(again, 404, 'not_found');
      assert.equal(again.headers.get(REPLAYED), null, 'failures are not replayed');
      const fixed = await send({ leadId: lead.id, callId: call.id });
      assert.equal(fixed.status, 202, fixed.text);
      assertReplay(fixed, await send({ leadId: lead.id, callId: call.id }));

      const idem2 = randomUUID();
      assertInvalid(await postLead({ name: '' }, idem2), ['name']);
      const created = await postLead({ name: 'Fixed Name' }, idem2);
      assert.equal(created.status, 201, created.text);
    });

    it('creates exactly one lead from 10 concurrent requests with one key', async () => {
      const idem = randomUUID();
      const answers = await Promise.all(Array.from({ length: 10 }, () => postLead({ name: 'Concurrent' }, idem)));
      const created = answers.filter((r) => r.status === 201 && r.headers.get(REPLAYED) === null);
      const replayed = answers.filter((r) => r.status === 201 && r.headers.get(REPLAYED) === 'true');
      const conflicts = answers.filter((r) => r.status === 409);
      assert.equal(created.length, 1, answers.map((r) => r.status).join(','));
      assert.equal(created.length + replayed.length + conflicts.length, 10, answers.map((r) => `${r.status} ${r.text}`).join('\n'));
      for (const r of replayed) assert.equal(r.json.id, created[0]!.json.id);
      for (const r of conflicts) assertProblem(r, 409, 'idempotency_conflict');
      assert.equal(await leadsNamed('Concurrent'), 1);
      assertReplay(created[0]!, await postLead({ name: 'Concurrent' }, idem));
    });

    it('answers 409 while the first request is in flight, and lets a retry take over one that died in flight', async () => {
      const idem = randomUUID();
      const first = await postLead({ name: 'In Flight' }, idem);
      assert.equal(first.status, 201);
      // Put the key back in the state a first request holds it in while it runs (or when its process died).
      await db(t).updateTable('idempotency_keys')
        .set({ response_status: null, response_body: null, response_location: null, locked_until: new Date(clock.now().getTime() + 60_000) })
        .where('idempotency_key', '=', idem).execute();
      const busy = await postLead({ name: 'In Flight' }, idem);
      assertProblem(busy, 409, 'idempotency_conflict');
      assertProblem(await postLead({ name: 'Other Body' }, idem), 422, 'idempotency_key_reused');
      assert.equal(await leadsNamed('Other Body'), 0);
      clock.advance(60_001);
      const retry = await postLead({ name: 'In Flight' }, idem);
      assert.equal(retry.status, 201, retry.text);
      assert.equal(retry.headers.get(REPLAYED), null, 'a request that died in flight is taken over, not replayed');
      assertReplay(retry, await postLead({ name: 'In Flight' }, idem));
    });

    it('creates one lead when concurrent requests with one key carry different bodies', async () => {
      const idem = randomUUID();
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => postLead({ name: `Race ${i % 2}` }, idem)));
      const created = answers.filter((r) => r.status === 201 && r.headers.get(REPLAYED) === null);
      assert.equal(created.length, 1, answers.map((r) => r.status).join(','));
      for (const r of answers) {
        if (r.status === 201) assert.equal(r.json.id, created[0]!.json.id);
        else assert.ok([409, 422].includes(r.status), `${r.status} ${r.text}`);
      }
      assert.equal(await leadsNamed('Race 0') + await leadsNamed('Race 1'), 1);
    });

    it('remembers a key for 24 hours', async () => {
      const idem = randomUUID();
      const first = await postLead({ name: 'Day Long' }, idem);
      clock.advance(24 * 60 * 60 * 1000 - 1);
      assertReplay(first, await postLead({ name: 'Day Long' }, idem));
      clock.advance(2);
      const later = await postLead({ name: 'Day Long' }, idem);
      assert.equal(later.status, 201);
      assert.equal(later.headers.get(REPLAYED), null, 'after 24 h the key is forgotten');
      assert.notEqual(later.json.id, first.json.id);
    });
  });
}
