// The audit log: every POST (and PATCH) made with a valid key writes exactly one entry; a 401 and a GET write
// none; a successful mutation and its entry commit together. Entries are read straight from `audit_log`, and
// through the `audit.list` admin command.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.ts';
import { BACKENDS, startTestApp, TRANSCRIPT, type ApiResponse, type TestApp } from '../helpers.ts';
import { assertProblem, auditRows, countRows, createCall, createLead, db, refuseAuditFor, startRun } from './support.ts';

const UA = 'leadrun-audit-tests/1.0';

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let A: { id: string };
    let F: { id: string };
    let keyA: { id: string; key: string };
    let readOnly: { id: string; key: string };
    let keyF: { id: string; key: string };
    let lead: any;
    let call: any;

    before(async () => {
      t = await startTestApp(kind, { config: { freePlanMonthlyRuns: 1 } });
      A = await t.workspace('pro');
      F = await t.workspace('free');
      keyA = await t.key(A.id);
      readOnly = await t.key(A.id, ['leads:read', 'runs:read']);
      keyF = await t.key(F.id);
      lead = await createLead(t, keyA.key, { name: 'Audited Lead' });
      call = await createCall(t, keyA.key, lead.id);
    });
    after(() => t?.close());

    /** Makes a request with a known request id and user agent, and returns its answer and its audit entries. */
    async function audited(method: string, path: string, options: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}) {
      const requestId = `audit-${randomUUID()}`;
      const res = await t.api(method, path, { ...options, headers: { 'x-request-id': requestId, 'user-agent': UA, ...options.headers } });
      assert.equal(res.headers.get('x-request-id'), requestId, 'the request id sent is the one used');
      return { res, entries: await auditRows(t, { requestId }) };
    }

    function assertEntry(entries: any[], res: ApiResponse, expected: { workspaceId: string; keyId: string; action: string; outcome: string; target?: { type: string; id: string } | null }) {
      assert.equal(entries.length, 1, `exactly one audit entry for ${res.status} ${res.text}`);
      const e = entries[0];
      assert.equal(e.workspace_id, expected.workspaceId);
      assert.equal(e.source, 'api');
      assert.equal(e.key_id, expected.keyId);
      assert.equal(e.user_id, null);
      assert.equal(e.action, expected.action);
      assert.equal(e.outcome, expected.outcome);
      assert.equal(e.status, res.status);
      assert.equal(e.request_id, res.headers.get('x-request-id'));
      assert.match(e.ip ?? '', /^(::ffff:)?127\.0\.0\.1$|^::1$/);
      assert.equal(e.user_agent, UA);
      assert.ok(e.occurred_at instanceof Date && !Number.isNaN(e.occurred_at.getTime()));
      if (expected.target !== undefined) {
        assert.deepEqual(expected.target === null ? null : { type: e.target_type, id: e.target_id }, expected.target);
      }
    }

    describe('successful mutations', () => {
      it('POST /api/v1/leads writes lead.created with the lead as target', async () => {
        const { res, entries } = await audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'Entry' } });
        assert.equal(res.status, 201);
        assertEntry(entries, res, { workspaceId: A.id, keyId: keyA.id, action: 'lead.created', outcome: 'success', target: { type: 'lead', id: res.json.id } });
      });

      it('POST /api/v1/leads/{id}/calls writes call.created with the call as target', async () => {
        const { res, entries } = await audited('POST', `/api/v1/leads/${lead.id}/calls`, { key: keyA.key, body: { transcript: TRANSCRIPT } });
        assert.equal(res.status, 201);
        assertEntry(entries, res, { workspaceId: A.id, keyId: keyA.id, action: 'call.created', outcome: 'success', target: { type: 'call', id: res.json.id } });
      });

      it('POST /api/v1/runs writes run.created with the run as target and status 202', async () => {
        const { res, entries } = await audited('POST', '/api/v1/runs', { key: keyA.key, body: { leadId: lead.id, callId: call.id } });
        assert.equal(res.status, 202);
        assertEntry(entries, res, { workspaceId: A.id, keyId: keyA.id, action: 'run.created', outcome: 'success', target: { type: 'run', id: res.json.id } });
      });

      it('PATCH /api/v1/leads/{id} writes lead.updated', async () => {
        const { res, entries } = await audited('PATCH', `/api/v1/leads/${lead.id}`, { key: keyA.key, body: { companyName: 'Audited Co' } });
        assert.equal(res.status, 200);
        assertEntry(entries, res, { workspaceId: A.id, keyId: keyA.id, action: 'lead.updated', outcome: 'success', target: { type: 'lead', id: lead.id } });
      });

      it('an idempotent replay is a POST of its own: one replayed entry, naming what the first request created', async () => {
        const idem = randomUUID();
        const first = await audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'Replayed' }, headers: { 'idempotency-key': idem } });
        const replay = await audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'Replayed' }, headers: { 'idempotency-key': idem } });
        assert.equal(replay.res.headers.get('idempotent-replayed'), 'true');
        assertEntry(first.entries, first.res, { workspaceId: A.id, keyId: keyA.id, action: 'lead.created', outcome: 'success' });
        assertEntry(replay.entries, replay.res, { workspaceId: A.id, keyId: keyA.id, action: 'lead.created', outcome: 'replayed', target: { type: 'lead', id: first.res.json.id } });
      });
    });

    describe('refused POSTs', () => {
      const cases: Array<[string, () => Promise<{ res: ApiResponse; entries: any[] }>, number, string, string, () => { workspaceId: string; keyId: string }]> = [
        ['400 for an invalid body', () => audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: '' } }), 400, 'failure', 'lead.created', () => ({ workspaceId: A.id, keyId: keyA.id })],
        ['400 for malformed JSON', () => audited('POST', '/api/v1/leads', { key: keyA.key, raw: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'failure', 'lead.created', () => ({ workspaceId: A.id, keyId: keyA.id })],
        ['403 for a key without the scope', () => audited('POST', '/api/v1/runs', { key: readOnly.key, body: { leadId: lead.id, callId: call.id } }), 403, 'denied', 'run.created', () => ({ workspaceId: A.id, keyId: readOnly.id })],
        ['404 for an unknown lead', () => audited('POST', '/api/v1/runs', { key: keyA.key, body: { leadId: randomUUID(), callId: call.id } }), 404, 'failure', 'run.created', () => ({ workspaceId: A.id, keyId: keyA.id })],
        ['404 for a call on an unknown lead', () => audited('POST', `/api/v1/leads/${randomUUID()}/calls`, { key: keyA.key, body: { transcript: 'x' } }), 404, 'failure', 'call.created', () => ({ workspaceId: A.id, keyId: keyA.id })],
        ['413 for a body over 1 MiB', () => audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'x'.repeat(1024 * 1024 + 1) } }), 413, 'failure', 'lead.created', () => ({ workspaceId: A.id, keyId: keyA.id })],
        ['415 for a body that is not JSON', () => audited('POST', '/api/v1/leads', { key: keyA.key, raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'failure', 'lead.created', () => ({ workspaceId: A.id, keyId: keyA.id })],
      ];
      for (const [what, send, status, outcome, action, who] of cases) {
        it(`${what} writes one ${outcome} entry with status ${status}`, async () => {
          const { res, entries } = await send();
          assertProblem(res, status);
          assertEntry(entries, res, { ...who(), action, outcome, target: null });
        });
      }

      it('402 at the Free-plan limit writes one failure entry with status 402', async () => {
        const fLead = await createLead(t, keyF.key);
        const fCall = await createCall(t, keyF.key, fLead.id);
        await startRun(t, keyF.key, fLead.id, fCall.id);
        const { res, entries } = await audited('POST', '/api/v1/runs', { key: keyF.key, body: { leadId: fLead.id, callId: fCall.id } });
        assertProblem(res, 402, 'run_limit_reached');
        assertEntry(entries, res, { workspaceId: F.id, keyId: keyF.id, action: 'run.created', outcome: 'failure', target: null });
      });

      it('a refused PATCH writes one entry too (404 for an unknown lead, 400 for a bad body)', async () => {
        const missing = await audited('PATCH', `/api/v1/leads/${randomUUID()}`, { key: keyA.key, body: { name: 'Nobody' } });
        assertProblem(missing.res, 404);
        assertEntry(missing.entries, missing.res, { workspaceId: A.id, keyId: keyA.id, action: 'lead.updated', outcome: 'failure', target: null });
        const bad = await audited('PATCH', `/api/v1/leads/${lead.id}`, { key: keyA.key, body: { status: 'BOGUS' } });
        assertProblem(bad.res, 400);
        assertEntry(bad.entries, bad.res, { workspaceId: A.id, keyId: keyA.id, action: 'lead.updated', outcome: 'failure', target: null });
      });

      it('422 for a reused Idempotency-Key writes one failure entry', async () => {
        const idem = randomUUID();
        await audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'One' }, headers: { 'idempotency-key': idem } });
        const { res, entries } = await audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'Two' }, headers: { 'idempotency-key': idem } });
        assertProblem(res, 422, 'idempotency_key_reused');
        assertEntry(entries, res, { workspaceId: A.id, keyId: keyA.id, action: 'lead.created', outcome: 'failure', target: null });
      });
    });

    describe('requests that write no entry', () => {
      it('a 401 writes none', async () => {
        const before = await countRows(t, 'audit_log');
        const revoked = await t.key(A.id);
        await t.revoke(revoked.id);
        const afterRevoke = await countRows(t, 'audit_log');
        // A typo in the last character: another one, whatever the key ends with (a key that ends in 0 stayed valid).
        const typo = `${keyA.key.slice(0, -1)}${keyA.key.endsWith('0') ? '1' : '0'}`;
        for (const authorization of [undefined, 'Bearer', `Bearer ${revoked.key}`, `Bearer ${typo}`, 'Basic eDp5']) {
          const { res, entries } = await audited('POST', '/api/v1/leads', { body: { name: 'Nope' }, ...(authorization ? { headers: { authorization } } : {}) });
          assertProblem(res, 401, 'unauthorized');
          assert.deepEqual(entries, []);
        }
        assert.equal(await countRows(t, 'audit_log'), afterRevoke);
        assert.ok(afterRevoke >= before);
      });

      it('GETs write none, whatever they answer', async () => {
        const run = await startRun(t, keyA.key, lead.id, call.id);
        const before = await countRows(t, 'audit_log');
        for (const path of ['/api/v1/leads', `/api/v1/leads/${lead.id}`, `/api/v1/leads/${lead.id}/calls`, '/api/v1/runs', `/api/v1/runs/${run.id}`, `/api/v1/runs/${randomUUID()}`, '/api/v1/leads?limit=0']) {
          await t.api('GET', path, { key: keyA.key });
          await t.api('GET', path, { key: keyF.key });
        }
        await t.api('GET', '/api/v1/runs', { key: (await t.key(A.id, ['leads:read'])).key }); // 403
        assert.equal(await countRows(t, 'audit_log'), before + 1, 'only the key creation of this test (source cli) was audited');
      });
    });

    describe('atomicity', () => {
      it('a mutation whose audit entry cannot be written is rolled back and answered 500 without details', async () => {
        await refuseAuditFor(t, 'refuse-audit');
        const before = { leads: await countRows(t, 'leads', A.id), calls: await countRows(t, 'calls', A.id), runs: await countRows(t, 'runs', A.id) };
        const headers = { 'user-agent': 'refuse-audit' };
        const attempts = [
          await t.api('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'Orphan' }, headers }),
          await t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key: keyA.key, body: { transcript: 'Orphan call' }, headers }),
          await t.api('POST', '/api/v1/runs', { key: keyA.key, body: { leadId: lead.id, callId: call.id }, headers }),
          await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key: keyA.key, body: { name: 'Orphan name' }, headers }),
        ];
        for (const res of attempts) {
          assertProblem(res, 500, 'internal');
          assert.ok(!res.text.includes('secret detail'), 'the database error does not leave the server');
        }
        assert.equal(await countRows(t, 'leads', A.id), before.leads, 'no lead without its entry');
        assert.equal(await countRows(t, 'calls', A.id), before.calls, 'no call without its entry');
        assert.equal(await countRows(t, 'runs', A.id), before.runs, 'no run without its entry');
        assert.notEqual((await t.api('GET', `/api/v1/leads/${lead.id}`, { key: keyA.key })).json.data.name, 'Orphan name');
      });

      it('every lead, call and run made through the API has exactly one success entry naming it', async () => {
        for (const [table, action, type] of [['leads', 'lead.created', 'lead'], ['calls', 'call.created', 'call'], ['runs', 'run.created', 'run']] as const) {
          const ids = (await db(t).selectFrom(table).select('id').where('workspace_id', '=', A.id).execute()).map((r) => r.id);
          assert.ok(ids.length > 0);
          const entries = (await auditRows(t, { workspaceId: A.id })).filter((e) => e.action === action && e.outcome === 'success' && e.target_id !== null);
          assert.deepEqual(entries.map((e) => e.target_id).sort(), [...ids].sort(), `${table}: one entry each`);
          assert.ok(entries.every((e) => e.target_type === type && e.source === 'api' && e.key_id === keyA.id));
        }
      });
    });

    it('the audit.list admin command shows the API entries, newest first, with source api and the key id', async () => {
      const { res } = await audited('POST', '/api/v1/leads', { key: keyA.key, body: { name: 'Listed Entry' } });
      const admin = { db: t.database.db, clock: t.deps.clock, migrate: () => t.database.migrate() };
      const entries = (await runAdminCommand(admin, { command: 'audit.list', workspace: A.id, limit: 1000 })) as any[];
      const newest = entries[0];
      assert.equal(newest.requestId, res.headers.get('x-request-id'));
      assert.equal(newest.source, 'api');
      assert.equal(newest.keyId, keyA.id);
      assert.equal(newest.action, 'lead.created');
      assert.deepEqual(newest.target, { type: 'lead', id: res.json.id });
      assert.equal(newest.outcome, 'success');
      assert.equal(newest.status, 201);
      assert.equal(newest.userAgent, UA);
      const times = entries.map((e) => e.occurredAt);
      assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
      assert.ok(entries.every((e) => e.workspaceId === A.id), 'only this workspace');
    });
  });
}
