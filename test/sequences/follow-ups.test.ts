// Follow-ups end to end (DESIGN §13), on both backends, with an injected clock and a real SMTP server: an approval
// enrols the lead; touch 1 goes; the auto follow-up is written ahead and sent when due, and the review-required one
// waits in the queue until approved; each is a reply in the thread (Re:, In-Reply-To, References, read back with
// mailparser); the last one finishes the enrolment. Stops hold: a stop after a follow-up was queued sends nothing; a
// newer enrolment supersedes the older; a lead moved to WON stops its sequence; two schedulers racing for one due
// touch make one delivery and one message.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { saveMailSettings } from '../../src/domain/mail-settings/settings.ts';
import { runSchedulerPass } from '../../src/domain/sequences/scheduler.ts';
import { stopEnrolments } from '../../src/domain/sequences/stops.ts';
import { addBusinessDays } from '../../src/domain/sequences/schedule.ts';
import { writeFollowUp } from '../../src/agent/follow-up/index.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, pollUntil, startRun } from '../http/support.ts';
import { eventually } from '../worker/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const DAY = 24 * 60 * 60_000;
const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

for (const kind of BACKENDS) {
  describe(`follow-ups (${kind})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let runner: JobRunner | null = null;
    // A Wednesday at 10:00 UTC.
    const clock = new ManualClock('2026-01-14T10:00:00.000Z');

    const startRunner = async () => {
      runner = new JobRunner({
        database: t.database, clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
        handlers: [deliveryHandler({ leaseMs: 10_000, retry: { maxAttempts: 3, delay: () => 50 } })], pollMs: 20, drainMs: 1_000,
      });
      await runner.start();
    };
    const stopRunner = async () => { await runner?.stop(); runner = null; };

    before(async () => {
      t = await startTestApp(kind, { clock, config: { allowPrivateHosts: true, secretsKey: randomBytes(32) } });
      await t.startWorker();
      smtp = await startSmtpServer();
    });
    afterEach(async () => { await stopRunner(); });
    after(async () => {
      await stopRunner();
      await smtp?.close();
      await t?.close();
    });

    async function fixture() {
      const ws = await t.workspace('pro');
      const { key } = await t.key(ws.id);
      await t.database.db.transaction().execute((trx) => saveMailSettings(trx, ws.id, {
        fromName: 'Acme Sales', fromAddress: 'sales@acme.test', smtp: { host: smtp.host, port: smtp.port, security: 'none' },
      }, t.deps.secrets(), null, clock));
      return { ws, key };
    }

    async function awaitingApproval(key: string, email = `lead-${randomBytes(3).toString('hex')}@example.net`) {
      const lead = await createLead(t, key, { name: 'Ada Lovelace', companyName: 'Analytical Engines', email });
      const call = await createCall(t, key, lead.id);
      const run = await startRun(t, key, lead.id, call.id);
      const done = await waitForRun(t, key, run.id, atRest);
      assert.equal(done.status, 'AWAITING_APPROVAL');
      return done;
    }

    const touches = async (key: string, runId: string) => {
      const res = await t.api('GET', `/api/v1/runs/${runId}/touches`, { key });
      assert.equal(res.status, 200, res.text);
      return res.json.data as any[];
    };
    const touchIs = (key: string, runId: string, number: number, status: string) =>
      eventually(`touch ${number} ${status}`, async () => {
        const list = await touches(key, runId);
        return list[number - 1]?.status === status ? list : false;
      }, 20_000, 150);
    const mailsTo = (to: string) => smtp.received.filter((m) => m.envelope.to.includes(to));
    const pass = () => runSchedulerPass(t.database.db, clock, writeFollowUp);
    /** Moves the clock to touch `number`'s due time. */
    const toDue = async (key: string, runId: string, number: number) => {
      const dueAt = (await touches(key, runId))[number - 1].dueAt;
      assert.ok(dueAt, `touch ${number} has a due time`);
      clock.set(dueAt);
    };

    /** A run whose touch 1 went and whose auto follow-up is due and queued, with no runner working. */
    async function queuedFollowUp(prefix: string) {
      const { ws, key } = await fixture();
      const sequence = (await t.api('POST', '/api/v1/sequences', { key, body: { name: 'Auto', steps: [{ waitDays: 1, instruction: 'Bump.', review: 'auto' }] } })).json.data;
      const email = `${prefix}-${randomBytes(3).toString('hex')}@example.net`;
      const run = await awaitingApproval(key, email);
      await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: { deliver: 'send', sequenceId: sequence.id } });
      await startRunner();
      await touchIs(key, run.id, 1, 'SENT');
      await stopRunner();
      await toDue(key, run.id, 2);
      await pass();
      await pass();
      return { workspaceId: ws.id, key, email, run };
    }

    it('sends touch 1, the auto follow-up when due and the reviewed one once approved, as one thread', async () => {
      const { key } = await fixture();
      const sequence = (await t.api('POST', '/api/v1/sequences', { key, body: { name: 'Bump twice', steps: [
        { waitDays: 1, instruction: 'A short bump.', review: 'auto' },
        { waitDays: 2, instruction: 'A last note.', review: 'required' },
      ] } })).json.data;
      const run = await awaitingApproval(key, 'ada@example.net');
      const approved = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: { deliver: 'send', sequenceId: sequence.id } });
      assert.equal(approved.status, 200, approved.text);
      assert.deepEqual(approved.json.data.sequence, {
        id: sequence.id, name: 'Bump twice', status: 'ACTIVE', stopReason: null, pausedUntil: null, nextTouchAt: null,
      });
      await startRunner();
      const afterFirst = await touchIs(key, run.id, 1, 'SENT');
      const sentAt = clock.now();
      // Wednesday 10:00 + 1 business day: Thursday 10:00; written a day ahead, so at once.
      assert.equal(afterFirst[1].dueAt, addBusinessDays(sentAt, 1).toISOString());
      assert.deepEqual(afterFirst.map((x) => [x.number, x.of, x.status]), [[1, 3, 'SENT'], [2, 3, 'SCHEDULED'], [3, 3, 'SCHEDULED']]);

      // Written now (a day ahead), not sent before it is due.
      await pass();
      assert.equal((await touches(key, run.id))[1].status, 'DRAFTED');
      await pass();
      assert.equal((await touches(key, run.id))[1].status, 'DRAFTED');
      await toDue(key, run.id, 2);
      await pass();
      await touchIs(key, run.id, 2, 'SENT');

      // The review-required one is written a day ahead and waits for a person, however long.
      await toDue(key, run.id, 3);
      clock.advance(-DAY);
      await pass();
      const waiting = await touchIs(key, run.id, 3, 'AWAITING_APPROVAL');
      assert.match(waiting[2].draft.subject, /^Re: /);
      clock.advance(10 * DAY);
      await pass();
      assert.equal((await touches(key, run.id))[2].status, 'AWAITING_APPROVAL');
      const ok = await t.api('POST', `/api/v1/runs/${run.id}/touches/3/approve`, { key, body: {} });
      assert.equal(ok.status, 200, ok.text);
      await touchIs(key, run.id, 3, 'SENT');
      const done = (await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data;
      assert.equal(done.sequence.status, 'FINISHED');

      const [first, second, third] = await Promise.all(mailsTo('ada@example.net').map((m) => simpleParser(m.raw)));
      assert.ok(first && second && third);
      assert.equal(second.subject, `Re: ${first.subject}`);
      assert.equal(third.subject, `Re: ${first.subject}`);
      assert.equal(second.inReplyTo, first.messageId);
      assert.equal(third.inReplyTo, second.messageId);
      assert.deepEqual([third.references].flat(), [first.messageId, second.messageId]);
      assert.equal(second.to && 'text' in second.to ? second.to.value[0]?.address : null, 'ada@example.net');
      assert.equal(second.from?.value[0]?.address, 'sales@acme.test');

      const events = (await t.database.db.selectFrom('run_events').select(['type', 'attempt']).where('run_id', '=', run.id).orderBy('seq').execute())
        .filter((e) => e.type.startsWith('sequence.') || e.type.startsWith('touch.')).map((e) => `${e.type}${e.attempt ? ` ${e.attempt}` : ''}`);
      assert.deepEqual(events, [
        'sequence.enrolled', 'touch.sent 1', 'touch.drafted 2', 'touch.approved 2', 'touch.sent 2',
        'touch.drafted 3', 'touch.awaiting_approval 3', 'touch.approved 3', 'touch.sent 3', 'sequence.finished',
      ]);
    });

    it('sends nothing once the sequence is stopped after its follow-up was queued', async () => {
      const { key, email, run } = await queuedFollowUp('stop');
      const queued = await touches(key, run.id);
      assert.equal(queued[1].status, 'APPROVED');
      assert.equal(queued[1].delivery.status, 'QUEUED');
      const stopped = await t.api('POST', `/api/v1/runs/${run.id}/sequence/stop`, { key, body: {} });
      assert.equal(stopped.status, 200, stopped.text);
      assert.equal(stopped.json.data.sequence.status, 'STOPPED');
      assert.equal(stopped.json.data.sequence.stopReason, 'manual');
      await startRunner();
      await eventually('the follow-up job done', async () => {
        const job = await t.database.db.selectFrom('jobs').select('status').where('key', '=', queued[1].delivery ? (await t.database.db
          .selectFrom('touches').select('delivery_id').where('run_id', '=', run.id).where('number', '=', 2).executeTakeFirstOrThrow()).delivery_id! : '')
          .executeTakeFirst();
        return job?.status === 'DONE';
      });
      const after = await touches(key, run.id);
      assert.equal(after[1].status, 'SKIPPED');
      assert.equal(after[1].skipReason, 'manual');
      assert.equal(after[1].delivery.status, 'CANCELLED');
      assert.equal(mailsTo(email).length, 1);
    });

    it('holds a stop that comes between the delivery\'s load and its claim: the claim finds the sequence stopped', async () => {
      const { key, email, run } = await queuedFollowUp('claim');
      // The stop is written as another cause would (a reply): the enrolment STOPPED, the delivery left QUEUED, as if
      // the stop had raced past the cancel of queued deliveries. The claim must still refuse it.
      await t.database.db.updateTable('enrolments').set({ status: 'STOPPED', stop_reason: 'replied' }).where('run_id', '=', run.id).execute();
      await startRunner();
      await assertSkippedUnsent(key, run.id, email);
    });

    /**
     * The follow-up stopped by a reply is SKIPPED and its delivery CANCELLED, unsent: only touch 1 reached the lead,
     * and only touch 1 took a slot of the sender.
     */
    async function assertSkippedUnsent(key: string, runId: string, email: string) {
      await touchIs(key, runId, 2, 'SKIPPED');
      const after = await touches(key, runId);
      assert.equal(after[1].skipReason, 'replied');
      assert.equal(after[1].delivery.status, 'CANCELLED');
      assert.equal(mailsTo(email).length, 1);
      const slots = await t.database.db.selectFrom('touches as t').innerJoin('email_deliveries as e', 'e.id', 't.delivery_id')
        .select(['t.number', 'e.slot_taken_at', 'e.workspace_id']).where('t.run_id', '=', runId).orderBy('t.number').execute();
      assert.deepEqual(slots.map((s) => [s.number, s.slot_taken_at !== null]), [[1, true], [2, false]]);
      const counters = await t.database.db.selectFrom('sender_counters').select('sent').where('workspace_id', '=', slots[0]!.workspace_id).execute();
      assert.deepEqual(counters.map((c) => c.sent), [1]);
    }

    if (kind === 'postgres') {
      it('sends nothing and takes no slot when a stop commits while the worker waits to claim the follow-up', async () => {
        const { workspaceId, key, email, run } = await queuedFollowUp('racing');
        assert.equal((await touches(key, run.id))[1].delivery.status, 'QUEUED');
        // A reply's stop holds the enrolment's lock when the worker comes to claim: the claim waits for it to commit.
        let release!: () => void;
        const held = new Promise<void>((resolve) => { release = resolve; });
        const stopping = t.database.db.transaction().execute(async (trx) => {
          await stopEnrolments(trx, { workspaceId, leadId: run.leadId, reason: 'replied', at: clock.now() });
          await held;
        });
        await startRunner();
        await pollUntil(async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM pg_locks WHERE NOT granted
          AND locktype IN ('transactionid', 'tuple')`.execute(t.database.db)).rows[0]!.n), (n) => n > 0, { what: 'a worker waiting to claim', timeoutMs: 20_000 });
        release();
        await stopping;
        await assertSkippedUnsent(key, run.id, email);
      });
    }

    it('makes one delivery when two schedulers race for the same due touch', async () => {
      const { key } = await fixture();
      const sequence = (await t.api('POST', '/api/v1/sequences', { key, body: { name: 'Auto', steps: [{ waitDays: 1, instruction: 'Bump.', review: 'auto' }] } })).json.data;
      const email = `race-${randomBytes(3).toString('hex')}@example.net`;
      const run = await awaitingApproval(key, email);
      await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: { deliver: 'send', sequenceId: sequence.id } });
      await startRunner();
      await touchIs(key, run.id, 1, 'SENT');
      await toDue(key, run.id, 2);
      await Promise.all([pass(), pass()]);
      await Promise.all([pass(), pass(), pass()]);
      await touchIs(key, run.id, 2, 'SENT');
      const deliveries = await t.database.db.selectFrom('email_deliveries').select('id').where('run_id', '=', run.id).execute();
      assert.equal(deliveries.length, 2);
      assert.equal(mailsTo(email).length, 2);
    });

    it('stops the older enrolment when the lead is enrolled again (superseded), and when the lead is WON (lead_closed)', async () => {
      const { key } = await fixture();
      const email = `again-${randomBytes(3).toString('hex')}@example.net`;
      const first = await awaitingApproval(key, email);
      await t.api('POST', `/api/v1/runs/${first.id}/approve`, { key, body: { deliver: 'send' } });
      const call = await createCall(t, key, first.leadId);
      const second = await waitForRun(t, key, (await startRun(t, key, first.leadId, call.id)).id, atRest);
      const approved = await t.api('POST', `/api/v1/runs/${second.id}/approve`, { key, body: { deliver: 'send' } });
      assert.equal(approved.json.data.sequence.status, 'ACTIVE');
      assert.equal(approved.json.data.sequence.name, 'Two follow-ups');
      const older = (await t.api('GET', `/api/v1/runs/${first.id}`, { key })).json.data.sequence;
      assert.deepEqual([older.status, older.stopReason], ['STOPPED', 'superseded']);
      assert.deepEqual((await touches(key, first.id)).slice(1).map((x) => [x.status, x.skipReason]), [['SKIPPED', 'superseded'], ['SKIPPED', 'superseded']]);

      const won = await t.api('PATCH', `/api/v1/leads/${first.leadId}`, { key, body: { status: 'WON' } });
      assert.equal(won.status, 200, won.text);
      const closed = (await t.api('GET', `/api/v1/runs/${second.id}`, { key })).json.data.sequence;
      assert.deepEqual([closed.status, closed.stopReason], ['STOPPED', 'lead_closed']);

      // Erasure takes the lead's enrolments and touches with its runs.
      const runIds = [first.id, second.id];
      assert.equal((await t.api('DELETE', `/api/v1/leads/${first.leadId}`, { key })).status, 204);
      assert.deepEqual(await t.database.db.selectFrom('touches').select('id').where('run_id', 'in', runIds).execute(), []);
      assert.deepEqual(await t.database.db.selectFrom('enrolments').select('id').where('lead_id', '=', first.leadId).execute(), []);
    });

    it('stops the follow-ups of a lead a lead import moves to LOST (lead_closed)', async () => {
      const { key } = await fixture();
      const email = `import-${randomBytes(3).toString('hex')}@example.net`;
      const run = await awaitingApproval(key, email);
      assert.equal((await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: { deliver: 'send' } })).json.data.sequence.status, 'ACTIVE');
      const imported = await t.api('POST', '/api/v1/leads/import?dedupe=email', { key, body: { leads: [{ name: 'Ada Lovelace', email, status: 'LOST' }] } });
      assert.equal(imported.status, 200, imported.text);
      assert.equal(imported.json.updated, 1);
      const sequence = (await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data.sequence;
      assert.deepEqual([sequence.status, sequence.stopReason], ['STOPPED', 'lead_closed']);
    });

    it('enrols in nothing with `sequenceId: null`, and refuses another workspace\'s sequence with 404 naming the field', async () => {
      const { key } = await fixture();
      const other = await fixture();
      const theirs = (await t.api('GET', '/api/v1/sequences', { key: other.key })).json.data[0];
      const email = `none-${randomBytes(3).toString('hex')}@example.net`;
      const third = await awaitingApproval(key, email);
      const refused = await t.api('POST', `/api/v1/runs/${third.id}/approve`, { key, body: { deliver: 'send', sequenceId: theirs.id } });
      assert.equal(refused.status, 404, refused.text);
      assert.equal(refused.json.errors[0].field, 'sequenceId');
      assert.equal((await t.api('GET', `/api/v1/runs/${third.id}`, { key })).json.data.status, 'AWAITING_APPROVAL', 'nothing was approved');
      // `sequenceId: null` enrols in nothing.
      const none = await t.api('POST', `/api/v1/runs/${third.id}/approve`, { key, body: { deliver: 'send', sequenceId: null } });
      assert.equal(none.json.data.sequence, null);
      assert.deepEqual(await touches(key, third.id), []);
    });
  });
}
