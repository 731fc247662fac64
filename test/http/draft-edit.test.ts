// Editing a draft in place (PATCH /api/v1/runs/{id}/draft) and reading every version (GET …/drafts), DESIGN §7:
// an edit is the next version, its grounding checked again; only while AWAITING_APPROVAL; approve and regenerate act
// on the latest version; concurrent edits land as consecutive versions; hostile text never makes a 500.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Engine, PreviousDraft } from '../../src/agent/engine.ts';
import { draftVersionsOf } from '../../web/src/lib/draftVersions.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { testOfflineEngine } from '../support/cpu.ts';
import { assertInvalid, assertProblem, auditRows, createCall, createLead, db, ISO_MS, startRun } from './support.ts';

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED', 'COMPLETED', 'REJECTED'].includes(r.status);

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let key: string;
    let keyId: string;
    let workspaceA: string;
    let otherKey: string;
    let lead: any;
    let call: any;

    before(async () => {
      t = await startTestApp(kind);
      const A = await t.workspace('pro');
      const B = await t.workspace('pro');
      workspaceA = A.id;
      const k = await t.key(A.id, undefined, 'Editing key');
      key = k.key;
      keyId = k.id;
      otherKey = (await t.key(B.id)).key;
      lead = await createLead(t, key, { name: 'Ada Lovelace', email: 'ada@example.com', companyName: 'Analytical Engines' });
      call = await createCall(t, key, lead.id);
      // The offline engine, telling what WRITER was given to build on.
      const offline = testOfflineEngine();
      const recording: Engine = {
        name: offline.name,
        analyse: (ctx) => offline.analyse(ctx),
        strategise: (ctx) => offline.strategise(ctx),
        write: (ctx) => {
          (previousDrafts.get(ctx.runId) ?? previousDrafts.set(ctx.runId, []).get(ctx.runId)!).push(ctx.previousDraft ?? null);
          return offline.write(ctx);
        },
      };
      await t.startWorker({ engine: recording });
    });
    const previousDrafts = new Map<string, Array<PreviousDraft | null>>();
    after(() => t?.close());

    async function awaitingApproval(): Promise<any> {
      const run = await startRun(t, key, lead.id, call.id);
      const done = await waitForRun(t, key, run.id, atRest);
      assert.equal(done.status, 'AWAITING_APPROVAL', JSON.stringify(done.steps.map((s: any) => s.error)));
      return done;
    }
    const edit = (runId: string, body: unknown, k = key) => t.api('PATCH', `/api/v1/runs/${runId}/draft`, { key: k, body });
    const versions = async (runId: string, k = key) => {
      const res = await t.api('GET', `/api/v1/runs/${runId}/drafts`, { key: k });
      assert.equal(res.status, 200, res.text);
      return res.json.data as any[];
    };

    it("WRITER's first draft is version 1, generated, with its grounding verdict on the draft", async () => {
      const run = await awaitingApproval();
      const draft = run.emailDraft;
      assert.equal(draft.version, 1);
      assert.equal(draft.origin, 'generated');
      assert.equal(draft.editedAt, null);
      const writer = run.steps.find((s: any) => s.node === 'WRITER').output;
      assert.deepEqual(draft.grounding, { verdict: writer.grounding.grounded ? 'grounded' : 'unsupported', unsupported: writer.grounding.unsupported });
      const listed = await versions(run.id);
      assert.equal(listed.length, 1);
      assert.deepEqual(Object.keys(listed[0]).sort(),
        ['body', 'createdAt', 'editedAt', 'editedBy', 'feedback', 'grounding', 'id', 'origin', 'replacedBy', 'status', 'subject', 'to', 'version']);
      assert.equal(listed[0].replacedBy, null);
      assert.equal(listed[0].id, draft.id);
      assert.match(listed[0].createdAt, ISO_MS);
      assert.equal(listed[0].editedBy, null);
      assert.deepEqual(listed[0].grounding, draft.grounding);
    });

    it('edits each field as the next version; the one before is SUPERSEDED; the list shows them oldest first', async () => {
      const run = await awaitingApproval();
      const v1 = run.emailDraft;

      const subject = await edit(run.id, { subject: '  Month-end reporting at Analytical Engines  ' });
      assert.equal(subject.status, 200, subject.text);
      const v2 = subject.json.data.emailDraft;
      assert.equal(subject.json.data.status, 'AWAITING_APPROVAL');
      assert.equal(v2.version, 2);
      assert.equal(v2.origin, 'edited');
      assert.equal(v2.status, 'DRAFT');
      assert.equal(v2.subject, 'Month-end reporting at Analytical Engines', 'trimmed');
      assert.equal(v2.body, v1.body, 'the body is copied');
      assert.equal(v2.to, v1.to);
      assert.match(v2.editedAt, ISO_MS);
      assert.notEqual(v2.id, v1.id);

      const body = await edit(run.id, { body: 'Hi Ada,\r\n\r\nThanks for the call about month-end reporting.\r\n\r\nBest' });
      assert.equal(body.status, 200, body.text);
      assert.equal(body.json.data.emailDraft.version, 3);
      assert.equal(body.json.data.emailDraft.body, 'Hi Ada,\n\nThanks for the call about month-end reporting.\n\nBest', 'line breaks as \\n');
      assert.equal(body.json.data.emailDraft.subject, v2.subject);

      const to = await edit(run.id, { to: 'ada.lovelace@example.org' });
      assert.equal(to.status, 200, to.text);
      assert.equal(to.json.data.emailDraft.to, 'ada.lovelace@example.org');
      assert.deepEqual(to.json.data.emailDraft.grounding, body.json.data.emailDraft.grounding, 'a new recipient keeps the verdict on the text');
      const noRecipient = await edit(run.id, { to: null });
      assert.equal(noRecipient.status, 200, noRecipient.text);
      assert.equal(noRecipient.json.data.emailDraft.to, null);
      assert.equal(noRecipient.json.data.emailDraft.version, 5);

      // GET /runs/{id} (written by PostgreSQL) and the PATCH answer (through the schema) show the same draft.
      const got = (await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data;
      assert.deepEqual(got.emailDraft, noRecipient.json.data.emailDraft);

      const listed = await versions(run.id);
      assert.deepEqual(listed.map((v) => [v.version, v.origin, v.status]), [
        [1, 'generated', 'SUPERSEDED'], [2, 'edited', 'SUPERSEDED'], [3, 'edited', 'SUPERSEDED'], [4, 'edited', 'SUPERSEDED'], [5, 'edited', 'DRAFT'],
      ]);
      assert.equal(listed[0].body, v1.body, 'the generated text stays readable');
      assert.equal(listed[1].subject, 'Month-end reporting at Analytical Engines');
      assert.deepEqual(listed[1].editedBy, { type: 'key', id: keyId, name: 'Editing key' });
      assert.equal(listed[4].id, got.emailDraft.id);
    });

    it('an edit that changes nothing makes no version', async () => {
      const run = await awaitingApproval();
      const same = await edit(run.id, { subject: run.emailDraft.subject, body: run.emailDraft.body, to: run.emailDraft.to });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.json.data.emailDraft.id, run.emailDraft.id);
      assert.equal(same.json.data.emailDraft.version, 1);
      assert.equal((await versions(run.id)).length, 1);
    });

    it('re-checks grounding: a made-up figure is unsupported, the facts of the call are grounded', async () => {
      const run = await awaitingApproval();
      const made = await edit(run.id, { body: 'Hi Ada,\n\nOur customers cut costs by 87% in the first month.\n\nBest' });
      assert.equal(made.status, 200, made.text);
      const grounding = made.json.data.emailDraft.grounding;
      assert.equal(grounding.verdict, 'unsupported');
      assert.ok(grounding.unsupported.some((u: string) => u.includes('87%')), JSON.stringify(grounding));

      const grounded = await edit(run.id, { body: 'Hi Ada,\n\nYour month-end reporting takes four days. Budget is approved for Q3.\n\nBest' });
      assert.equal(grounded.status, 200, grounded.text);
      assert.deepEqual(grounded.json.data.emailDraft.grounding, { verdict: 'grounded', unsupported: [] });
      const listed = await versions(run.id);
      assert.equal(listed[1].grounding.verdict, 'unsupported', 'each version keeps its own verdict');
      assert.equal(listed[2].grounding.verdict, 'grounded');
    });

    it("a signature is no unsupported claim: the sender's name and signature count as what the run knows", async () => {
      const run = await awaitingApproval();
      const { created_by_user_id: sender } = await db(t).selectFrom('runs').select('created_by_user_id').where('id', '=', run.id).executeTakeFirstOrThrow();
      await db(t).updateTable('users').set({ signature: 'Maya Brooks\nHead of Sales, Kestrel Systems' }).where('id', '=', sender!).execute();
      try {
        const signed = await edit(run.id, { body: 'Hi Ada,\n\nYour month-end reporting takes four days.\n\nMaya Brooks\nHead of Sales, Kestrel Systems' });
        assert.equal(signed.status, 200, signed.text);
        assert.deepEqual(signed.json.data.emailDraft.grounding, { verdict: 'grounded', unsupported: [] });
        const other = await edit(run.id, { body: 'Hi Ada,\n\nYour month-end reporting takes four days.\n\nJohn Falcon\nHead of Sales, Osprey Ltd' });
        assert.equal(other.json.data.emailDraft.grounding.verdict, 'unsupported', 'a name from nowhere still is');
      } finally {
        await db(t).updateTable('users').set({ signature: null }).where('id', '=', sender!).execute();
      }
    });

    it('refuses invalid edits with 400 naming the field, and changes nothing', async () => {
      const run = await awaitingApproval();
      const cases: Array<[unknown, string[]]> = [
        [{}, []],
        [{ greeting: 'Hi' }, []],
        [{ subject: 'ok', status: 'APPROVED' }, []],
        [{ subject: null }, ['subject']],
        [{ subject: '' }, ['subject']],
        [{ subject: '   ' }, ['subject']],
        [{ subject: 'x'.repeat(81) }, ['subject']],
        [{ subject: 'Hello\r\nBcc: everyone@example.com' }, ['subject']],
        // What some mail programs read as a line break, and an encoded word that would show as other text.
        [{ subject: 'Hello\u2028Bcc: everyone@example.com' }, ['subject']],
        [{ subject: 'Hello\u0085there' }, ['subject']],
        [{ subject: 'Re: =?utf-8?b?WW91ciBpbnZvaWNlIGlzIHBhaWQ=?=' }, ['subject']],
        [{ subject: '=?ISO-8859-1?Q?Andr=E9?=' }, ['subject']],
        [{ body: '' }, ['body']],
        [{ body: ' \n\t ' }, ['body']],
        [{ body: 'x'.repeat(20 * 1024) }, ['body']],
        [{ body: 'null byte \u0000 here' }, ['body']],
        [{ body: 'bell \u0007' }, ['body']],
        [{ body: 42 }, ['body']],
        [{ to: 'not an address' }, ['to']],
        [{ to: '' }, ['to']],
        [{ to: ['ada@example.com'] }, ['to']],
      ];
      for (const [body, fields] of cases) {
        const res = await edit(run.id, body);
        if (fields.length) assertInvalid(res, fields, JSON.stringify(body).slice(0, 80));
        else assertProblem(res, 400, 'invalid_request', JSON.stringify(body));
      }
      for (const raw of ['null', '[]', '"subject"', '{"subject":']) {
        const res = await t.api('PATCH', `/api/v1/runs/${run.id}/draft`, { key, raw, headers: { 'content-type': 'application/json' } });
        assertProblem(res, 400, undefined, raw);
      }
      assert.equal((await versions(run.id)).length, 1, 'no version was made');
    });

    it('takes a body of exactly 5,000 characters, and hostile text without a 500, in bounded time', async () => {
      const run = await awaitingApproval();
      const full = `Hi Ada,\n\n${'word '.repeat(1000)}`.slice(0, 4999) + '.';
      const atLimit = await edit(run.id, { body: full });
      assert.equal(atLimit.status, 200, atLimit.text);
      assert.equal(atLimit.json.data.emailDraft.body.length, 5000);
      const hostile = [
        'A'.repeat(5000),
        'Zz'.repeat(2500),
        `${'Ünïcödé Wörds '.repeat(300)}`.slice(0, 5000),
        '9'.repeat(4999) + '%',
        `${'$1,000,000 '.repeat(450)}`,
        `${'“Quoted” (Names) Here. '.repeat(200)}`,
        `tab\there\tand\r\nline\rbreaks — \u202e reversed \u200b zero width 😀`,
        `${'a@b.co '.repeat(700)}`,
      ];
      for (const body of hostile) {
        const started = Date.now();
        const res = await edit(run.id, { body });
        assert.equal(res.status, 200, `${body.slice(0, 40)}: ${res.text.slice(0, 300)}`);
        assert.ok(Date.now() - started < 10_000, 'answered in bounded time');
        assert.ok(res.json.data.emailDraft.grounding === null || ['grounded', 'unsupported'].includes(res.json.data.emailDraft.grounding.verdict));
      }
      const health = await t.api('GET', '/healthz');
      assert.equal(health.status, 200);
    });

    it('answers 409 invalid_state outside AWAITING_APPROVAL, and 404 for another workspace or an unknown run', async () => {
      const run = await awaitingApproval();
      assertProblem(await edit(run.id, { subject: 'Mine' }, otherKey), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/drafts`, { key: otherKey }), 404, 'not_found');
      assertProblem(await edit(randomUUID(), { subject: 'Nobody' }), 404, 'not_found');
      assertProblem(await edit('not-a-uuid', { subject: 'Nobody' }), 404, 'not_found');
      assertProblem(await t.api('GET', '/api/v1/runs/not-a-uuid/drafts', { key }), 404, 'not_found');

      assert.equal((await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key })).status, 200);
      const late = await edit(run.id, { subject: 'Too late' });
      assertProblem(late, 409, 'invalid_state');
      assert.equal(late.json.runStatus, 'COMPLETED');

      const rejected = await awaitingApproval();
      assert.equal((await t.api('POST', `/api/v1/runs/${rejected.id}/reject`, { key, body: { feedback: 'No' } })).status, 200);
      assertProblem(await edit(rejected.id, { subject: 'Too late' }), 409, 'invalid_state');
      assert.equal((await versions(rejected.id)).length, 1);
    });

    it('approve after an edit approves the edited version; the superseded one stays SUPERSEDED', async () => {
      const run = await awaitingApproval();
      const edited = (await edit(run.id, { subject: 'Your month-end reporting' })).json.data.emailDraft;
      const approved = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key });
      assert.equal(approved.status, 200, approved.text);
      assert.equal(approved.json.data.emailDraft.id, edited.id);
      assert.equal(approved.json.data.emailDraft.status, 'APPROVED');
      assert.equal(approved.json.data.emailDraft.subject, 'Your month-end reporting');
      const listed = await versions(run.id);
      assert.deepEqual(listed.map((v) => v.status), ['SUPERSEDED', 'APPROVED']);
    });

    it('regenerate after an edit builds on the edit: WRITER gets the edited text; no version reads REJECTED; one numbering', async () => {
      const run = await awaitingApproval();
      assert.deepEqual(previousDrafts.get(run.id), [null], 'the first draft replaces nothing');
      const edited = await edit(run.id, { subject: 'Edited first', body: `Hi Ada,\n\nMy own words, kept.\n\n${run.emailDraft.body.split('\n\n').at(-1)}` });
      assert.equal(edited.status, 200, edited.text);
      const res = await t.api('POST', `/api/v1/runs/${run.id}/reject`, { key, body: { feedback: 'Shorter please.', regenerate: true } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.data.emailDraft.version, 2);
      assert.equal(res.json.data.emailDraft.status, 'SUPERSEDED', 'asking for another version rejects nothing');
      const again = await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL');
      assert.equal(again.emailDraft.version, 3);
      assert.equal(again.emailDraft.origin, 'regenerated');
      assert.ok(again.emailDraft.grounding, 'the regenerated version carries its verdict');

      // WRITER was given the version the reviewer last saw: the person's edit, as v2.
      const given = previousDrafts.get(run.id)!;
      assert.ok(given.length >= 2, JSON.stringify(given));
      for (const previous of given.slice(1)) {
        assert.deepEqual(previous, { version: 2, subject: 'Edited first', body: edited.json.data.emailDraft.body, origin: 'edited' });
      }
      assert.match(given[1]!.body, /My own words, kept\./);

      const listed = await versions(run.id);
      assert.deepEqual(listed.map((v) => [v.version, v.origin, v.status, v.feedback, v.replacedBy]), [
        [1, 'generated', 'SUPERSEDED', null, { version: 2, origin: 'edited' }],
        [2, 'edited', 'SUPERSEDED', 'Shorter please.', { version: 3, origin: 'regenerated' }],
        [3, 'regenerated', 'DRAFT', null, null],
      ]);
      assert.ok(listed.every((v) => v.status !== 'REJECTED'));

      // The trace numbers the versions from the run's events as the list does: WRITER wrote v1 and v3, a person v2.
      const events = (await t.api('GET', `/api/v1/runs/${run.id}/events`, { key })).json.data as Array<{ id: number; type: string; node: string | null }>;
      const numbers = draftVersionsOf(events);
      const written = events.filter((e) => e.type === 'step.completed' && e.node === 'WRITER').map((e) => numbers.get(e.id));
      const edits = events.filter((e) => e.type === 'draft.edited').map((e) => numbers.get(e.id));
      assert.deepEqual(written, listed.filter((v) => v.origin !== 'edited').map((v) => v.version));
      assert.deepEqual(edits, listed.filter((v) => v.origin === 'edited').map((v) => v.version));
      assert.deepEqual(events.filter((e) => e.type === 'run.awaiting_approval').map((e) => numbers.get(e.id)), [1, 3]);
    });

    it('regenerate without an edit: the version WRITER wrote is SUPERSEDED with the feedback, and WRITER builds on it', async () => {
      const run = await awaitingApproval();
      const res = await t.api('POST', `/api/v1/runs/${run.id}/reject`, { key, body: { feedback: 'More formal.', regenerate: true } });
      assert.equal(res.status, 200, res.text);
      await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL');
      assert.deepEqual(previousDrafts.get(run.id)![1],
        { version: 1, subject: run.emailDraft.subject, body: run.emailDraft.body, origin: 'generated' });
      assert.deepEqual((await versions(run.id)).map((v) => [v.version, v.status, v.feedback, v.replacedBy?.origin ?? null]), [
        [1, 'SUPERSEDED', 'More formal.', 'regenerated'], [2, 'DRAFT', null, null],
      ]);
      // A rejection without asking for another version is one: REJECTED.
      const rejected = await awaitingApproval();
      assert.equal((await t.api('POST', `/api/v1/runs/${rejected.id}/reject`, { key, body: { feedback: 'No.' } })).json.data.emailDraft.status, 'REJECTED');
    });

    it('writes an audit entry draft.edited with the version and fields, and a draft.edited run event', async () => {
      const run = await awaitingApproval();
      const res = await edit(run.id, { subject: 'Audited edit', to: 'ada@example.org' });
      assert.equal(res.status, 200, res.text);
      const entry = (await auditRows(t, { requestId: res.headers.get('x-request-id')! }))[0]!;
      assert.equal(entry.action, 'draft.edited');
      assert.equal(entry.workspace_id, workspaceA);
      assert.equal(entry.target_type, 'run');
      assert.equal(entry.target_id, run.id);
      assert.equal(entry.outcome, 'success');
      assert.deepEqual(entry.details, { version: 2, changed: 'subject,to' });
      const refused = await edit(run.id, { subject: '' });
      const refusal = (await auditRows(t, { requestId: refused.headers.get('x-request-id')! }))[0]!;
      assert.equal(refusal.action, 'draft.edited');
      assert.equal(refusal.outcome, 'failure');

      const events = await t.api('GET', `/api/v1/runs/${run.id}/events`, { key });
      assert.equal(events.status, 200, events.text);
      assert.equal(events.json.data.filter((e: any) => e.type === 'draft.edited').length, 1);
    });

    it('a key with runs:write alone gets 204; one with runs:read alone gets 403', async () => {
      const run = await awaitingApproval();
      const writeOnly = (await t.key(workspaceA, ['runs:write'])).key;
      const readOnly = (await t.key(workspaceA, ['runs:read'])).key;
      const res = await edit(run.id, { subject: 'Written blind' }, writeOnly);
      assert.equal(res.status, 204, res.text);
      assertProblem(await edit(run.id, { subject: 'Not allowed' }, readOnly), 403, 'insufficient_scope');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/drafts`, { key: writeOnly }), 403, 'insufficient_scope');
      assert.equal((await versions(run.id, readOnly)).length, 2);
    });

    it('concurrent edits land as consecutive versions, never a duplicate or a 500', async () => {
      const run = await awaitingApproval();
      const bodies = Array.from({ length: 6 }, (_, i) => `Hi Ada,\n\nEdit number ${i + 1} about month-end reporting.\n\nBest`);
      const answers = await Promise.all(bodies.map((body, i) => edit(run.id, i % 2 ? { body } : { body, subject: `Subject ${i}` })));
      for (const res of answers) assert.ok(res.status === 200 || res.status === 409, `${res.status} ${res.text.slice(0, 200)}`);
      const landed = answers.filter((r) => r.status === 200).length;
      const listed = await versions(run.id);
      assert.equal(listed.length, 1 + landed);
      assert.deepEqual(listed.map((v) => v.version), listed.map((_, i) => i + 1));
      assert.equal(listed.filter((v) => v.status === 'DRAFT').length, 1);
      assert.equal(listed.at(-1).status, 'DRAFT');
    });
  });
}
