// DELETE /api/v1/leads/{id} and DELETE /api/v1/leads/{leadId}/calls/{id}, on both backends: an erased lead leaves no
// row anywhere that holds its data or points at it (every table of the schema is read), the audit log keeps ids
// only, a run being worked is erased under its worker without a crash or a row written back, a call is refused
// while a run of it is in the pipeline, and (on PostgreSQL, where requests run at once) the races between erasure,
// new runs and new calls end in a clean 404 or 409.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import type { FetchedPage } from '../../src/agent/website.ts';
import { loadRun } from '../../src/jobs/sql/run/loadRun.ts';
import { BACKENDS, startTestApp, TRANSCRIPT, waitForRun, type TestApp } from '../helpers.ts';
import { assertProblem, auditRows, createCall, createLead, db, pollUntil, startRun } from './support.ts';

/** The names of every table of the schema, from the catalogue: a table added later is read too. */
async function tableNames(t: TestApp): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(db(t));
  return rows.map((r) => r.table_name);
}

/** "table: needle" for every table holding a row whose any column mentions a needle (case aside). */
async function mentions(t: TestApp, needles: string[], tables: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const table of tables) {
    for (const needle of needles) {
      const { rows: [row] } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${sql.table(table)} x WHERE strpos(lower(to_jsonb(x)::text), lower(${needle})) > 0`.execute(db(t));
      if (row!.n > 0) found.push(`${table}: ${needle}`);
    }
  }
  return found;
}

/** A logger whose lines the test reads, and waits on. */
function capturedLogger() {
  const lines: any[] = [];
  const waiting: Array<{ test: (line: any) => boolean; resolve: () => void }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split('\n').filter(Boolean)) {
        const line = JSON.parse(text);
        lines.push(line);
        for (const w of [...waiting]) if (w.test(line)) { waiting.splice(waiting.indexOf(w), 1); w.resolve(); }
      }
      done();
    },
  });
  return {
    logger: pino({ level: 'debug' }, stream),
    lines,
    until: (test: (line: any) => boolean) => (lines.some(test) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ test, resolve }))),
  };
}

/** `promise`, or a failure naming `what` after `ms`: a bound on a wait, so that a broken build fails instead of hanging. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

for (const kind of BACKENDS) {
  describe(`erasure (${kind})`, () => {
    let t: TestApp;
    let A: { id: string; adminUserId: string };
    let key: string;
    let keyB: string;
    let readOnly: string;
    let tables: string[];
    const sent = (k: string, idem?: string) => ({ key: k, ...(idem ? { headers: { 'idempotency-key': idem } } : {}) });

    before(async () => {
      t = await startTestApp(kind);
      A = await t.workspace('pro');
      const B = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      keyB = (await t.key(B.id)).key;
      readOnly = (await t.key(A.id, ['leads:read', 'runs:read'])).key;
      tables = await tableNames(t);
    });
    after(() => t?.close());

    it('erases a lead with its calls, runs, steps, drafts, events and stored responses, and nothing of anyone else', async () => {
      // The lead, its calls and its runs, each created with an Idempotency-Key so that its response is stored.
      const person = { name: 'Erin Erasable', email: 'erin.erasable@forget-me.example', companyName: 'Oblivion Holdings', companyWebsite: 'https://oblivion-holdings.example' };
      const created = await t.api('POST', '/api/v1/leads', { ...sent(key, 'erase-lead'), body: person });
      assert.equal(created.status, 201, created.text);
      const lead = created.json;
      const firstCall = await t.api('POST', `/api/v1/leads/${lead.id}/calls`, { ...sent(key, 'erase-call'), body: { transcript: `${TRANSCRIPT}\nErin: our ledger is code-named Bluefinch.`, title: 'Erin discovery' } });
      assert.equal(firstCall.status, 201, firstCall.text);
      const secondCall = await createCall(t, key, lead.id, { transcript: 'Erin: we keep our pipeline in a notebook nobody else may read.' });
      // Another lead of the workspace with its own call and run: it must come through untouched.
      const other = await createLead(t, key, { name: 'Olive Other', email: 'olive@keep-me.example', companyName: 'Keeper Ltd' });
      const otherCall = await createCall(t, key, other.id);

      const post = (body: unknown, idem: string) => t.api('POST', '/api/v1/runs', { ...sent(key, idem), body });
      const decided = (await post({ leadId: lead.id, callId: firstCall.json.id }, 'erase-run-1')).json;
      const waiting = await startRun(t, key, lead.id, secondCall.id);
      const otherRun = (await post({ leadId: other.id, callId: otherCall.id }, 'keep-run')).json;
      const worker = await t.startWorker({ fetchPage: async (url): Promise<FetchedPage> => ({ ok: false, url, status: null, error: 'no network in tests' }) });
      for (const run of [decided, waiting, otherRun]) await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL');
      await worker.stop();
      const approved = await t.api('POST', `/api/v1/runs/${decided.id}/approve`, sent(key, 'erase-approve'));
      assert.equal(approved.status, 200, approved.text);
      assert.equal(approved.json.data.emailDraft.to, person.email, "the stored approval shows the lead's address");
      const queued = (await post({ leadId: lead.id, callId: firstCall.json.id }, 'erase-run-queued')).json;
      const cancelled = await startRun(t, key, lead.id, secondCall.id);
      assert.equal((await t.api('POST', `/api/v1/runs/${cancelled.id}/cancel`, { key })).status, 200);
      const runs = [decided, waiting, queued, cancelled];
      const draft = (await t.api('GET', `/api/v1/runs/${waiting.id}`, { key })).json.data.emailDraft;
      assert.ok(draft?.subject, 'the waiting run has a draft');

      const ids = [lead.id, firstCall.json.id, secondCall.id, ...runs.map((r) => r.id), approved.json.data.emailDraft.id, draft.id];
      const data = [person.name, person.email, person.companyName, person.companyWebsite, 'Bluefinch', 'pipeline in a notebook', 'Erin discovery'];
      // The search is not blind: before the erasure, it finds the lead's data and ids where they are kept.
      const before = await mentions(t, [...ids, ...data], tables);
      for (const table of ['leads', 'calls', 'runs', 'run_steps', 'run_events', 'email_drafts', 'idempotency_keys', 'audit_log']) {
        assert.ok(before.some((m) => m.startsWith(`${table}:`)), `${table} holds the lead's data or ids before (found: ${before.join('; ')})`);
      }
      const otherBefore = {
        lead: (await t.api('GET', `/api/v1/leads/${other.id}`, { key })).json,
        calls: (await t.api('GET', `/api/v1/leads/${other.id}/calls`, { key })).json,
        run: (await t.api('GET', `/api/v1/runs/${otherRun.id}`, { key })).json,
      };

      const res = await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key, headers: { 'user-agent': 'erasure-test' } });
      assert.equal(res.status, 204, res.text);
      assert.equal(res.text, '');

      assertProblem(await t.api('GET', `/api/v1/leads/${lead.id}`, { key }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/leads/${lead.id}/calls`, { key }), 404, 'not_found');
      for (const run of runs) assertProblem(await t.api('GET', `/api/v1/runs/${run.id}`, { key }), 404, 'not_found');
      assert.deepEqual((await t.api('GET', `/api/v1/runs?leadId=${lead.id}`, { key })).json.data, []);
      assert.equal((await t.api('GET', '/api/v1/leads/count?q=erin', { key })).json.count, 0);

      // Nothing anywhere holds the lead's data; only the audit log keeps its ids (its entries name what they were about).
      assert.deepEqual(await mentions(t, data, tables), [], "no row holds the lead's data");
      assert.deepEqual(await mentions(t, ids, tables.filter((n) => n !== 'audit_log')), [], 'no row outside the audit log points at what was erased');
      const [entry] = (await auditRows(t, { workspaceId: A.id })).filter((e) => e.action === 'lead.deleted');
      assert.ok(entry, 'the erasure is audited');
      assert.equal(entry.outcome, 'success');
      assert.equal(entry.status, 204);
      assert.equal(entry.source, 'api');
      assert.deepEqual([entry.target_type, entry.target_id], ['lead', lead.id]);
      assert.equal(entry.user_agent, 'erasure-test');

      // The other lead, its call, its run and its stored response are as they were.
      assert.deepEqual((await t.api('GET', `/api/v1/leads/${other.id}`, { key })).json, otherBefore.lead);
      assert.deepEqual((await t.api('GET', `/api/v1/leads/${other.id}/calls`, { key })).json, otherBefore.calls);
      assert.deepEqual((await t.api('GET', `/api/v1/runs/${otherRun.id}`, { key })).json, otherBefore.run);
      const replay = await post({ leadId: other.id, callId: otherCall.id }, 'keep-run');
      assert.equal(replay.headers.get('idempotent-replayed'), 'true', "another lead's stored response is kept");
      assert.equal(replay.json.id, otherRun.id);
    });

    it("erases the replies found to a lead's e-mails with their deliveries, and keeps the inbox cursor and others' replies", async () => {
      const worker = await t.startWorker({ fetchPage: async (url): Promise<FetchedPage> => ({ ok: false, url, status: null, error: 'no network in tests' }) });
      const replied = async (name: string, email: string, words: string) => {
        const lead = await createLead(t, key, { name, email });
        const call = await createCall(t, key, lead.id);
        const run = await waitForRun(t, key, (await startRun(t, key, lead.id, call.id)).id, (r) => r.status === 'AWAITING_APPROVAL');
        const now = new Date();
        const deliveryId = randomUUID();
        await db(t).insertInto('email_deliveries').values({
          id: deliveryId, workspace_id: A.id, run_id: run.id, draft_id: run.emailDraft.id, sender_user_id: null, method: 'send', status: 'DELIVERED',
          message_id: `<${randomUUID()}@leadrun.test>`, attempts: 1, queued_at: now, delivered_at: now, error: null, response: '250 ok',
        }).execute();
        await db(t).insertInto('email_replies').values({
          id: randomUUID(), workspace_id: A.id, delivery_id: deliveryId, run_id: run.id, message_id: `${randomUUID()}@mail.example`,
          from_address: `${name} <${email}>`, subject: 'Re: our call', snippet: words, received_at: now, found_at: now,
        }).execute();
        await db(t).updateTable('leads').set({ last_reply_at: now }).where('id', '=', lead.id).execute();
        return { lead, run };
      };
      const gone = await replied('Rhea Replier', 'rhea@reply-erased.example', 'Rhea says the Kestrel budget is signed.');
      const kept = await replied('Kim Kept', 'kim@reply-kept.example', 'Kim agrees to the pilot.');
      await worker.stop();
      await db(t).insertInto('mailbox_cursors').values({ workspace_id: A.id, uid_validity: 7, last_uid: 42, checked_at: new Date(), error: null })
        .onConflict((oc) => oc.column('workspace_id').doNothing()).execute();
      assert.ok((await t.api('GET', `/api/v1/runs/${gone.run.id}`, { key })).json.data.reply, 'the run shows its reply before');
      const keptBefore = (await t.api('GET', `/api/v1/runs/${kept.run.id}`, { key })).json;

      assert.equal((await t.api('DELETE', `/api/v1/leads/${gone.lead.id}`, { key })).status, 204);
      assert.deepEqual(await mentions(t, ['rhea@reply-erased.example', 'Kestrel budget', gone.run.id], tables.filter((n) => n !== 'audit_log')), []);
      assert.deepEqual((await t.api('GET', `/api/v1/runs/${kept.run.id}`, { key })).json, keptBefore);
      assert.equal(keptBefore.data.reply.snippet, 'Kim agrees to the pilot.');
      const cursor = await db(t).selectFrom('mailbox_cursors').selectAll().where('workspace_id', '=', A.id).executeTakeFirst();
      assert.equal(Number(cursor?.last_uid), 42, 'the inbox cursor stays');
    });

    it("answers 404 for an unknown, malformed, already erased or another workspace's lead, and erases nothing", async () => {
      const lead = await createLead(t, key, { name: 'Kept Lead' });
      const before = (await t.api('GET', '/api/v1/leads/count', { key })).json.count;
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', `${lead.id}x`, lead.id.toUpperCase().replace(/.$/, 'Z')]) {
        assertProblem(await t.api('DELETE', `/api/v1/leads/${encodeURIComponent(id)}`, { key }), 404, 'not_found', id);
      }
      assertProblem(await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key: keyB }), 404, 'not_found', "B's key on A's lead");
      assertProblem(await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key: readOnly }), 403, 'insufficient_scope');
      assert.equal((await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).status, 200, 'the lead is still there');
      assert.equal((await t.api('GET', '/api/v1/leads/count', { key })).json.count, before);
      // A key that may write but not read leads may erase (the id in capitals is the same id); then the lead is gone,
      // and a second erasure is a 404.
      const writeOnly = (await t.key(A.id, ['leads:write'])).key;
      assert.equal((await t.api('DELETE', `/api/v1/leads/${lead.id.toUpperCase()}`, { key: writeOnly })).status, 204);
      assertProblem(await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key }), 404, 'not_found', 'twice');
      const entries = (await auditRows(t, { workspaceId: A.id })).filter((e) => e.action === 'lead.deleted');
      assert.ok(entries.some((e) => e.outcome === 'success' && e.target_id === lead.id), 'the entry names the lead by its id as stored');
      const refused = entries.filter((e) => e.outcome !== 'success');
      assert.ok(refused.some((e) => e.status === 404 && e.outcome === 'failure'), 'a refused erasure is audited too');
      assert.ok(refused.some((e) => e.status === 403 && e.outcome === 'denied'));
    });

    it('hands back an event stream of an erased run with its end', async () => {
      const lead = await createLead(t, key, { name: 'Streamed Lead' });
      const call = await createCall(t, key, lead.id);
      const run = await startRun(t, key, lead.id, call.id);
      const res = await fetch(`${t.url}/api/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
      assert.equal(res.status, 200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('event: run.queued')) {
        const { value, done } = await reader.read();
        assert.ok(!done, `the stream shows the queued run before it ends: ${text}`);
        text += value;
      }
      assert.equal((await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key })).status, 204);
      await within((async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += value;
        }
      })(), 10_000, 'the stream to end');
      assert.match(text, /event: end\ndata: \{"status":null\}/);
    });

    describe('DELETE /api/v1/leads/{leadId}/calls/{id}', () => {
      it('refuses with 409 while a run of the call is QUEUED or RUNNING, then removes the call and its finished runs', async () => {
        const lead = await createLead(t, key, { name: 'Callum Calls' });
        const busy = await createCall(t, key, lead.id, { transcript: 'Callum: the first call.' });
        const idle = await createCall(t, key, lead.id, { transcript: 'Callum: the second call.' });
        const run = await startRun(t, key, lead.id, busy.id);
        const del = () => t.api('DELETE', `/api/v1/leads/${lead.id}/calls/${busy.id}`, { key });

        const queued = await del();
        assertProblem(queued, 409, 'invalid_state');
        assert.equal(queued.json.runStatus, 'QUEUED');
        assert.ok(queued.json.detail.includes(run.id), queued.json.detail);
        // A worker's claim, as claimNextRun writes it.
        await db(t).updateTable('runs').set({ status: 'RUNNING', lease_owner: 'test-worker', lease_expires_at: new Date(Date.now() + 3_600_000) })
          .where('id', '=', run.id).execute();
        const running = await del();
        assertProblem(running, 409, 'invalid_state');
        assert.equal(running.json.runStatus, 'RUNNING');
        assert.equal((await t.api('GET', `/api/v1/runs/${run.id}`, { key })).status, 200, 'nothing was removed');
        assert.equal((await t.api('GET', `/api/v1/leads/${lead.id}/calls`, { key })).json.data.length, 2);

        assert.equal((await t.api('POST', `/api/v1/runs/${run.id}/cancel`, { key })).status, 200);
        const res = await del();
        assert.equal(res.status, 204, res.text);
        assert.equal(res.text, '');
        assert.deepEqual((await t.api('GET', `/api/v1/leads/${lead.id}/calls`, { key })).json.data.map((c: any) => c.id), [idle.id]);
        assertProblem(await t.api('GET', `/api/v1/runs/${run.id}`, { key }), 404, 'not_found');
        assert.deepEqual(await mentions(t, [busy.id, run.id, 'the first call'], tables.filter((n) => n !== 'audit_log')), []);
        assert.equal((await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).status, 200, 'the lead stays');
        const entries = (await auditRows(t, { workspaceId: A.id })).filter((e) => e.action === 'call.deleted');
        assert.deepEqual(entries.map((e) => [e.outcome, e.status]), [['failure', 409], ['failure', 409], ['success', 204]]);
        assert.deepEqual([entries[2]!.target_type, entries[2]!.target_id], ['call', busy.id]);
        assertProblem(await del(), 404, 'not_found', 'a second time');
      });

      it("answers 404 for a call of another lead, an unknown or malformed id, or another workspace's call", async () => {
        const lead = await createLead(t, key, { name: 'Paula Path' });
        const otherLead = await createLead(t, key, { name: 'Other Path' });
        const call = await createCall(t, key, lead.id);
        const paths = [
          `/api/v1/leads/${otherLead.id}/calls/${call.id}`,
          `/api/v1/leads/${lead.id}/calls/00000000-0000-4000-8000-000000000000`,
          `/api/v1/leads/00000000-0000-4000-8000-000000000000/calls/${call.id}`,
          `/api/v1/leads/${lead.id}/calls/not-a-uuid`,
          `/api/v1/leads/not-a-uuid/calls/${call.id}`,
        ];
        for (const path of paths) assertProblem(await t.api('DELETE', path, { key }), 404, 'not_found', path);
        assertProblem(await t.api('DELETE', `/api/v1/leads/${lead.id}/calls/${call.id}`, { key: keyB }), 404, 'not_found', "B's key");
        assertProblem(await t.api('DELETE', `/api/v1/leads/${lead.id}/calls/${call.id}`, { key: readOnly }), 403, 'insufficient_scope');
        assert.equal((await t.api('GET', `/api/v1/leads/${lead.id}/calls`, { key })).json.data.length, 1, 'the call is still there');
      });
    });

    it('erases a lead whose run a worker is working on: the worker stops without writing and goes on with other runs', async () => {
      const blocked = 'https://blocked-research.example/';
      let reached!: () => void;
      const inResearch = new Promise<void>((resolve) => { reached = resolve; });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => { release = resolve; });
      const log = capturedLogger();
      const worker = await t.startWorker({
        logger: log.logger,
        leaseMs: 60_000,
        fetchPage: async (url): Promise<FetchedPage> => {
          if (url === blocked) { reached(); await gate; }
          return { ok: false, url, status: null, error: 'no network in tests' };
        },
      });
      try {
        const lead = await createLead(t, key, { name: 'Wanda Worked', email: 'wanda@worked.example', companyWebsite: blocked });
        const call = await createCall(t, key, lead.id);
        const run = await startRun(t, key, lead.id, call.id);
        await within(inResearch, 20_000, 'the worker to start RESEARCH');
        assert.equal((await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data.status, 'RUNNING');

        const res = await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key });
        assert.equal(res.status, 204, res.text);
        release();
        await within(log.until((line) => line.jobId === run.id && /lease lost/.test(line.msg)), 20_000, 'the worker to let go of the run');

        // The same worker takes the next run through to its draft.
        const next = await createLead(t, key, { name: 'Nina Next' });
        const nextCall = await createCall(t, key, next.id);
        const nextRun = await startRun(t, key, next.id, nextCall.id);
        await waitForRun(t, key, nextRun.id, (r) => r.status === 'AWAITING_APPROVAL');
        await worker.stop();

        assert.deepEqual(await mentions(t, [run.id, lead.id, call.id, 'wanda@worked.example', 'Wanda Worked'], tables.filter((n) => n !== 'audit_log')), [],
          'nothing of the erased run was written back');
        const errors = log.lines.filter((line) => line.level >= 50);
        assert.deepEqual(errors, [], 'the worker logged no error');
      } finally {
        release();
      }
    });

    it('gives a worker nothing to load for a run erased after its claim', async () => {
      const lead = await createLead(t, key, { name: 'Clara Claimed' });
      const call = await createCall(t, key, lead.id);
      const run = await startRun(t, key, lead.id, call.id);
      const claimed = { id: run.id, workspaceId: A.id, leadId: lead.id, callId: call.id, createdByUserId: A.adminUserId };
      assert.ok(await loadRun(db(t), claimed), 'loaded while the lead is there');
      assert.equal((await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key })).status, 204);
      assert.equal(await loadRun(db(t), claimed), null);
    });

    // PGlite is one session: a request runs alone, so these races cannot happen there.
    it("erases the drafts' deliveries with their jobs, for a lead and for a call, and keeps everyone else's", async () => {
      const mail = await startTestApp(kind, { config: { smtpUrl: 'smtp://127.0.0.1:9', mailFrom: { name: 'Acme', address: 'sales@acme.test' } } });
      try {
        const ws = await mail.workspace('pro');
        const k = (await mail.key(ws.id)).key;
        const worker = await mail.startWorker({ fetchPage: async (url): Promise<FetchedPage> => ({ ok: false, url, status: null, error: 'no network in tests' }) });
        /** A lead with a call whose run was approved with `send`: a QUEUED delivery and its job (no runner takes it here). */
        const delivered = async (name: string) => {
          const lead = await createLead(mail, k, { name, email: `${name.toLowerCase()}@example.net` });
          const call = await createCall(mail, k, lead.id);
          const run = await startRun(mail, k, lead.id, call.id);
          await waitForRun(mail, k, run.id, (r) => r.status === 'AWAITING_APPROVAL');
          const approved = await mail.api('POST', `/api/v1/runs/${run.id}/approve`, { key: k, body: { deliver: 'send' } });
          assert.equal(approved.status, 200, approved.text);
          assert.equal(approved.json.data.emailDraft.delivery.status, 'QUEUED');
          const delivery = await db(mail).selectFrom('email_deliveries').select('id').where('run_id', '=', run.id).executeTakeFirstOrThrow();
          return { lead, call, run, deliveryId: delivery.id };
        };
        const erased = await delivered('Erased');
        const callOnly = await delivered('Calls');
        const kept = await delivered('Kept');
        await worker.stop();
        const jobsOf = (deliveryId: string) => db(mail).selectFrom('jobs').select('id').where('key', '=', deliveryId).execute();
        const deliveriesOf = (runId: string) => db(mail).selectFrom('email_deliveries').select('id').where('run_id', '=', runId).execute();
        assert.equal((await jobsOf(erased.deliveryId)).length, 1);

        assert.equal((await mail.api('DELETE', `/api/v1/leads/${erased.lead.id}`, { key: k })).status, 204);
        assert.deepEqual(await deliveriesOf(erased.run.id), []);
        assert.deepEqual(await jobsOf(erased.deliveryId), []);
        assert.equal((await mail.api('DELETE', `/api/v1/leads/${callOnly.lead.id}/calls/${callOnly.call.id}`, { key: k })).status, 204);
        assert.deepEqual(await deliveriesOf(callOnly.run.id), []);
        assert.deepEqual(await jobsOf(callOnly.deliveryId), []);

        assert.equal((await deliveriesOf(kept.run.id)).length, 1, "another lead's delivery is kept");
        assert.equal((await jobsOf(kept.deliveryId)).length, 1, 'and its job');
        const run = await mail.api('GET', `/api/v1/runs/${kept.run.id}`, { key: k });
        assert.equal(run.json.data.emailDraft.delivery.status, 'QUEUED');
      } finally {
        await mail.close();
      }
    });

    describe('races with requests in flight', { skip: kind !== 'postgres' && 'PGlite runs one statement at a time' }, () => {
      /** A second session, holding a transaction open while a request arrives. */
      const session = async () => {
        const client = new pg.Client({ connectionString: t.databaseUrl! });
        await client.connect();
        await client.query('BEGIN');
        return client;
      };
      /** Resolves once a session of the test database is waiting for a lock. */
      const someoneWaits = (client: pg.Client) => pollUntil(
        async () => (await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n,
        (n) => n > 0, { timeoutMs: 10_000, what: 'a request waiting on a lock' });

      it('a run or a call added during the erasure of its lead waits for it, then answers 404', async () => {
        const lead = await createLead(t, key, { name: 'Rita Race' });
        const call = await createCall(t, key, lead.id);
        const erasing = await session();
        try {
          // What deleteLead holds until it commits: the lead's row, and then its rows gone.
          await erasing.query('SELECT id FROM leads WHERE id = $1 FOR UPDATE', [lead.id]);
          await erasing.query('DELETE FROM calls WHERE lead_id = $1', [lead.id]);
          await erasing.query('DELETE FROM leads WHERE id = $1', [lead.id]);
          const run = t.api('POST', '/api/v1/runs', { key, body: { leadId: lead.id, callId: call.id } });
          const added = t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key, body: { transcript: TRANSCRIPT } });
          await someoneWaits(erasing);
          await erasing.query('COMMIT');
          const [runRes, callRes] = await Promise.all([run, added]);
          assertProblem(runRes, 404, 'not_found', 'POST /runs');
          assert.deepEqual(runRes.json.errors.map((e: any) => e.field), ['leadId']);
          assertProblem(callRes, 404, 'not_found', 'POST calls');
        } finally {
          await erasing.end();
        }
        assert.equal(await sql<{ n: number }>`SELECT count(*)::int AS n FROM runs WHERE lead_id = ${lead.id}`.execute(db(t)).then((r) => r.rows[0]!.n), 0);
      });

      it('a call whose run is being started, or whose run is going back to the queue, is refused once that commits', async () => {
        const lead = await createLead(t, key, { name: 'Rory Race' });
        const call = await createCall(t, key, lead.id);
        const finished = await startRun(t, key, lead.id, call.id);
        assert.equal((await t.api('POST', `/api/v1/runs/${finished.id}/cancel`, { key })).status, 200);
        const del = () => t.api('DELETE', `/api/v1/leads/${lead.id}/calls/${call.id}`, { key });

        // A run of the call inserted and not yet committed (POST /api/v1/runs in flight).
        const starting = await session();
        try {
          await starting.query(`INSERT INTO runs (id, workspace_id, lead_id, call_id, status, trace_id, available_at, started_at, updated_at)
            VALUES (gen_random_uuid(), $1, $2, $3, 'QUEUED', 'race', now(), now(), now())`, [A.id, lead.id, call.id]);
          const refused = del();
          await someoneWaits(starting);
          await starting.query('COMMIT');
          const res = await refused;
          assertProblem(res, 409, 'invalid_state');
          assert.equal(res.json.runStatus, 'QUEUED');
        } finally {
          await starting.end();
        }
        await db(t).updateTable('runs').set({ status: 'CANCELLED' }).where('call_id', '=', call.id).execute();

        // The finished run moving back to QUEUED (a rejection with regenerate, a claim) while the delete checks.
        const requeueing = await session();
        try {
          await requeueing.query(`UPDATE runs SET status = 'QUEUED' WHERE id = $1`, [finished.id]);
          const refused = del();
          await someoneWaits(requeueing);
          await requeueing.query('COMMIT');
          const res = await refused;
          assertProblem(res, 409, 'invalid_state');
          assert.equal(res.json.runStatus, 'QUEUED');
        } finally {
          await requeueing.end();
        }
        await db(t).updateTable('runs').set({ status: 'CANCELLED' }).where('call_id', '=', call.id).execute();
        assert.equal((await del()).status, 204);
      });
    });
  });
}
