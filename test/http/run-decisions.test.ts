// Approve, reject (with and without regeneration) and cancel: valid only from the states DESIGN §3 names,
// 409 invalid_state otherwise with nothing changed, each audited.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, auditRows, createCall, createLead, db, startRun } from './support.ts';

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let key: string;
    let keyId: string;
    let workspaceA: string;
    let readOnly: string;
    let otherKey: string;
    let lead: any;
    let call: any;

    before(async () => {
      t = await startTestApp(kind);
      const A = await t.workspace('pro');
      const B = await t.workspace('pro');
      workspaceA = A.id;
      const k = await t.key(A.id);
      key = k.key;
      keyId = k.id;
      readOnly = (await t.key(A.id, ['runs:read', 'leads:read'])).key;
      otherKey = (await t.key(B.id)).key;
      lead = await createLead(t, key, { name: 'Ada Lovelace', email: 'ada@example.com', companyName: 'Analytical Engines' });
      call = await createCall(t, key, lead.id);
      await t.startWorker();
    });
    after(() => t?.close());

    async function awaitingApproval(): Promise<any> {
      const run = await startRun(t, key, lead.id, call.id);
      const done = await waitForRun(t, key, run.id, atRest);
      assert.equal(done.status, 'AWAITING_APPROVAL');
      return done;
    }

    const decide = (runId: string, what: 'approve' | 'reject' | 'cancel', body?: unknown, k = key) =>
      t.api('POST', `/api/v1/runs/${runId}/${what}`, { key: k, ...(body === undefined ? {} : { body }) });

    it('approve: the draft becomes APPROVED and the run COMPLETED, with or without an empty body', async () => {
      for (const body of [undefined, {}]) {
        const run = await awaitingApproval();
        const res = await decide(run.id, 'approve', body);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.data.status, 'COMPLETED');
        assert.equal(res.json.data.emailDraft.status, 'APPROVED');
        assert.equal(res.json.data.emailDraft.id, run.emailDraft.id);
        assert.equal(res.json.data.completedAt, run.completedAt, 'completedAt stays the end of the pipeline');
        const draft = await db(t).selectFrom('email_drafts').selectAll().where('id', '=', run.emailDraft.id).executeTakeFirstOrThrow();
        assert.equal(draft.decided_by_key_id, keyId);
        assert.ok(draft.decided_at);
      }
    });

    it('reject without regenerate ends the run REJECTED and keeps the feedback on the draft', async () => {
      const run = await awaitingApproval();
      const res = await decide(run.id, 'reject', { feedback: 'Not the right angle.' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.data.status, 'REJECTED');
      assert.equal(res.json.data.emailDraft.status, 'REJECTED');
      const draft = await db(t).selectFrom('email_drafts').selectAll().where('id', '=', run.emailDraft.id).executeTakeFirstOrThrow();
      assert.equal(draft.feedback, 'Not the right angle.');
    });

    it('reject with no body ends the run REJECTED with no feedback', async () => {
      const run = await awaitingApproval();
      const res = await decide(run.id, 'reject');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.data.status, 'REJECTED');
      const draft = await db(t).selectFrom('email_drafts').selectAll().where('id', '=', run.emailDraft.id).executeTakeFirstOrThrow();
      assert.equal(draft.feedback, null);
    });

    it('refuses a JSON null body with 400, whatever the state of the run: a body that is sent is validated', async () => {
      const waiting = await awaitingApproval();
      const completed = await awaitingApproval();
      assert.equal((await decide(completed.id, 'approve')).status, 200);
      for (const run of [waiting, completed]) {
        for (const what of ['approve', 'reject', 'cancel'] as const) {
          const res = await t.api('POST', `/api/v1/runs/${run.id}/${what}`, { key, raw: 'null', headers: { 'content-type': 'application/json' } });
          assertInvalid(res, ['(body)'], `${what} with null`);
        }
      }
      assert.equal((await t.api('GET', `/api/v1/runs/${waiting.id}`, { key })).json.data.status, 'AWAITING_APPROVAL', 'nothing changed');
    });

    it('answers 204 with no body to runs:write alone, which does not grant reading; the decision is made and audited', async () => {
      const writeOnly = await t.key(workspaceA, ['runs:write']);
      const approved = await awaitingApproval();
      const rejected = await awaitingApproval();
      for (const [run, what, body, status] of [[approved, 'approve', undefined, 'COMPLETED'], [rejected, 'reject', { feedback: 'No.' }, 'REJECTED']] as const) {
        const headers = { 'idempotency-key': `write-only-${run.id}` };
        for (const attempt of ['first', 'replay']) {
          const res = await t.api('POST', `/api/v1/runs/${run.id}/${what}`, { key: writeOnly.key, headers, ...(body ? { body } : {}) });
          assert.equal(res.status, 204, `${what} (${attempt}): ${res.text}`);
          assert.equal(res.text, '');
          assert.equal(res.headers.get('idempotent-replayed'), attempt === 'replay' ? 'true' : null);
        }
        assert.equal((await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data.status, status);
        const entries = (await auditRows(t)).filter((e) => e.key_id === writeOnly.id && e.target_id === run.id);
        assert.deepEqual(entries.map((e) => [e.outcome, e.status]), [['success', 204], ['replayed', 204]]);
      }
      const queued = await startRun(t, writeOnly.key, lead.id, call.id);
      assert.equal(queued.status, 'QUEUED', 'starting a run still answers the new run (202)');
    });

    it('reject with regenerate runs WRITER alone again with the feedback and makes the next draft version', async () => {
      const run = await awaitingApproval();
      const before = Object.fromEntries(run.steps.map((s: any) => [s.node, s]));
      const res = await decide(run.id, 'reject', { feedback: 'Shorter, and more formal please.', regenerate: true });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.data.status, 'QUEUED');
      assert.equal(res.json.data.completedAt, null);
      assert.deepEqual(res.json.data.steps.map((s: any) => s.status), ['COMPLETED', 'COMPLETED', 'COMPLETED', 'PENDING']);
      const again = await waitForRun(t, key, run.id, atRest);
      assert.equal(again.status, 'AWAITING_APPROVAL');
      assert.equal(again.emailDraft.version, 2);
      assert.equal(again.emailDraft.status, 'DRAFT');
      assert.notEqual(again.emailDraft.id, run.emailDraft.id);
      assert.notEqual(again.emailDraft.body, run.emailDraft.body, 'the feedback changed the draft');
      for (const node of ['RESEARCH', 'ANALYSIS', 'STRATEGY']) {
        const step = again.steps.find((s: any) => s.node === node);
        assert.deepEqual(step.output, before[node].output, `${node} was not run again`);
        assert.equal(step.attempts, 1);
      }
      // Asking for another version rejects nothing: the first is SUPERSEDED by the second, with the feedback that asked.
      const drafts = await db(t).selectFrom('email_drafts').select(['version', 'status', 'feedback']).where('run_id', '=', run.id).orderBy('version').execute();
      assert.deepEqual(drafts, [
        { version: 1, status: 'SUPERSEDED', feedback: 'Shorter, and more formal please.' }, { version: 2, status: 'DRAFT', feedback: null },
      ]);
      const feedback = await db(t).selectFrom('runs').select('feedback').where('id', '=', run.id).executeTakeFirstOrThrow();
      assert.equal(feedback.feedback, null, 'the feedback is used once');
      assert.equal((await decide(run.id, 'approve')).json.data.emailDraft.version, 2);
    });

    it('cancel stops a queued run: CANCELLED, completedAt set, every step SKIPPED, no draft', async () => {
      const idle = await startTestApp(kind); // no worker: the run stays QUEUED
      try {
        const A = await idle.workspace('pro');
        const k = (await idle.key(A.id)).key;
        const l = await createLead(idle, k);
        const c = await createCall(idle, k, l.id);
        const run = await startRun(idle, k, l.id, c.id);
        const res = await idle.api('POST', `/api/v1/runs/${run.id}/cancel`, { key: k });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.data.status, 'CANCELLED');
        assert.ok(res.json.data.completedAt);
        assert.deepEqual(res.json.data.steps.map((s: any) => s.status), ['SKIPPED', 'SKIPPED', 'SKIPPED', 'SKIPPED']);
        assert.equal(res.json.data.emailDraft, null);
        const worker = await idle.startWorker();
        await worker.stop();
        const after = await idle.api('GET', `/api/v1/runs/${run.id}`, { key: k });
        assert.equal(after.json.data.status, 'CANCELLED', 'a worker never picks a cancelled run up');
      } finally {
        await idle.close();
      }
    });

    it('answers 409 invalid_state from any other state and changes nothing', async () => {
      const approved = await awaitingApproval();
      await decide(approved.id, 'approve');
      const snapshot = (await t.api('GET', `/api/v1/runs/${approved.id}`, { key })).json;
      for (const [what, body] of [['approve', undefined], ['reject', { feedback: 'x' }], ['reject', { regenerate: true }], ['cancel', undefined]] as const) {
        const res = await decide(approved.id, what, body);
        assertProblem(res, 409, 'invalid_state', what);
        assert.equal(res.json.runStatus, 'COMPLETED');
        assert.match(res.json.detail, /COMPLETED/);
      }
      assert.deepEqual((await t.api('GET', `/api/v1/runs/${approved.id}`, { key })).json, snapshot);
      const waiting = await awaitingApproval();
      assertProblem(await decide(waiting.id, 'cancel'), 409, 'invalid_state');
    });

    it('refuses bad bodies, unknown and foreign runs, and keys without runs:write', async () => {
      const run = await awaitingApproval();
      assertInvalid(await decide(run.id, 'approve', { note: 'x' }), ['note']);
      assertInvalid(await decide(run.id, 'reject', { feedback: 'x'.repeat(2001) }), ['feedback']);
      assertInvalid(await decide(run.id, 'reject', { regenerate: 'yes' }), ['regenerate']);
      assertProblem(await decide(randomUUID(), 'approve'), 404, 'not_found');
      assertProblem(await decide('not-a-run', 'approve'), 404, 'not_found');
      assertProblem(await decide(run.id, 'approve', undefined, otherKey), 404, 'not_found');
      assertProblem(await decide(run.id, 'approve', undefined, readOnly), 403, 'insufficient_scope');
      assert.equal((await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data.status, 'AWAITING_APPROVAL');
    });

    it('audits every decision with its action, and a refused one as a failure', async () => {
      const run = await awaitingApproval();
      await decide(run.id, 'approve');
      await decide(run.id, 'cancel');
      const entries = (await auditRows(t)).filter((e) => e.target_id === run.id || (e.action === 'run.cancelled' && e.key_id === keyId));
      assert.ok(entries.some((e) => e.action === 'run.approved' && e.outcome === 'success' && e.target_id === run.id && e.status === 200));
      assert.ok(entries.some((e) => e.action === 'run.cancelled' && e.outcome === 'failure' && e.status === 409));
    });

    it('audits a reject with regenerate as run.regenerated, its replay and its refusal too, and a plain reject as run.rejected', async () => {
      const regenerated = await awaitingApproval();
      const headers = { 'idempotency-key': `regenerate-${regenerated.id}` };
      for (let i = 0; i < 2; i++) {
        const res = await t.api('POST', `/api/v1/runs/${regenerated.id}/reject`, { key, headers, body: { feedback: 'Shorter.', regenerate: true } });
        assert.equal(res.status, 200, res.text);
      }
      await waitForRun(t, key, regenerated.id, atRest);
      await decide(regenerated.id, 'approve');
      const refused = await decide(regenerated.id, 'reject', { regenerate: true });
      assertProblem(refused, 409, 'invalid_state');
      const rejected = await awaitingApproval();
      await decide(rejected.id, 'reject', { feedback: 'Not for us.', regenerate: false });

      const entries = await auditRows(t);
      const of = (runId: string) => entries.filter((e) => e.target_id === runId && e.action !== 'run.created').map((e) => [e.action, e.outcome, e.status]);
      assert.deepEqual(of(regenerated.id), [['run.regenerated', 'success', 200], ['run.regenerated', 'replayed', 200], ['run.approved', 'success', 200]]);
      assert.deepEqual(of(rejected.id), [['run.rejected', 'success', 200]]);
      const refusal = entries.find((e) => e.request_id === refused.headers.get('x-request-id'));
      assert.deepEqual(refusal && [refusal.action, refusal.outcome, refusal.status, refusal.key_id], ['run.regenerated', 'failure', 409, keyId]);
    });

    it('records every decision in the run events', async () => {
      const run = await awaitingApproval();
      await decide(run.id, 'reject', { feedback: 'Mention the pilot.', regenerate: true });
      await waitForRun(t, key, run.id, atRest);
      await decide(run.id, 'approve');
      const events = (await t.api('GET', `/api/v1/runs/${run.id}/events`, { key })).json.data.map((e: any) => e.type);
      assert.deepEqual(events.filter((e: string) => e.startsWith('run.')), [
        'run.queued', 'run.awaiting_approval', 'run.regenerating', 'run.awaiting_approval', 'run.approved',
      ]);
    });
  });
}
