// Follow-ups that wait for a person and follow-ups saved to a mailbox (DESIGN §13), on both backends: a reviewed
// follow-up is edited, regenerated with feedback, or skipped (the next one counting from then); it appears in the
// review queue as "Follow-up 2 of 3"; a pause holds the thread and its end (by hand, or a date) lets it go on; with
// `mailbox`, touch 1 and its follow-up are saved to a real Dovecot's Drafts as one conversation.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, afterEach, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { saveMailSettings, type MailSettingsInput } from '../../src/domain/mail-settings/settings.ts';
import { runSchedulerPass } from '../../src/domain/sequences/scheduler.ts';
import type { FollowUpInput } from '../../src/agent/follow-up/index.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { assertProblem, createCall, createLead, startRun } from '../http/support.ts';
import { eventually } from '../worker/support.ts';
import { DOVECOT, startDovecot } from '../support/dovecot.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const DAY = 24 * 60 * 60_000;
const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

for (const kind of BACKENDS) {
  describe(`follow-ups reviewed, paused and saved to a mailbox (${kind})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let runner: JobRunner | null = null;
    const clock = new ManualClock('2026-02-04T09:00:00.000Z');
    /** What the writer was asked, each time: the feedback of a regeneration reaches it. */
    const asked: FollowUpInput[] = [];
    const write = async (input: FollowUpInput) => {
      asked.push(input);
      return { subject: 'ignored', body: `Hi, follow-up ${input.touchNumber} of ${input.touchCount}${input.feedback ? ` (${input.feedback})` : ''}.` };
    };
    const pass = () => runSchedulerPass(t.database.db, clock, write);

    before(async () => {
      t = await startTestApp(kind, { clock, config: { allowPrivateHosts: true, secretsKey: randomBytes(32) } });
      await t.startWorker();
      smtp = await startSmtpServer();
      runner = new JobRunner({
        database: t.database, clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
        handlers: [deliveryHandler({ leaseMs: 10_000, retry: { maxAttempts: 3, delay: () => 50 } })], pollMs: 20, drainMs: 1_000,
      });
      await runner.start();
    });
    afterEach(() => { asked.length = 0; });
    after(async () => {
      await runner?.stop();
      await smtp?.close();
      await t?.close();
    });

    async function enrolled(settings: Partial<MailSettingsInput>, steps: unknown[], deliver: 'send' | 'mailbox' = 'send') {
      const ws = await t.workspace('pro');
      const { key } = await t.key(ws.id);
      await t.database.db.transaction().execute((trx) => saveMailSettings(trx, ws.id, {
        fromName: 'Acme Sales', fromAddress: 'sales@acme.test', ...settings,
      }, t.deps.secrets(), null, clock));
      // An endpoint for every event: the sequence's events are written to the outbox (no runner sends them here).
      assert.equal((await t.api('POST', '/api/v1/webhooks', { key, body: { url: 'https://93.184.215.14/hook' } })).status, 201);
      const sequence = (await t.api('POST', '/api/v1/sequences', { key, body: { name: 'Reviewed', steps } })).json.data;
      const lead = await createLead(t, key, { name: 'Grace Hopper', email: `grace-${randomBytes(3).toString('hex')}@example.net` });
      const call = await createCall(t, key, lead.id);
      const run = await waitForRun(t, key, (await startRun(t, key, lead.id, call.id)).id, atRest);
      const approved = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: { deliver, sequenceId: sequence.id } });
      assert.equal(approved.status, 200, approved.text);
      await touchIs(key, run.id, 1, 'SENT');
      return { key, run, lead, workspaceId: ws.id };
    }
    const touches = async (key: string, runId: string) => (await t.api('GET', `/api/v1/runs/${runId}/touches`, { key })).json.data as any[];
    const touchIs = (key: string, runId: string, number: number, status: string) =>
      eventually(`touch ${number} ${status}`, async () => {
        const list = await touches(key, runId);
        return list[number - 1]?.status === status ? list : false;
      }, 20_000, 150);
    const toDue = async (key: string, runId: string, number: number) => clock.set((await touches(key, runId))[number - 1].dueAt);
    const review = (key: string) => t.api('GET', '/api/v1/touches', { key }).then((r) => r.json.data as any[]);

    it('edits, regenerates with feedback and skips a reviewed follow-up; the queue shows "Follow-up 2 of 3"', async () => {
      const smtpSettings = { smtp: { host: smtp.host, port: smtp.port, security: 'none' as const } };
      const { key, run } = await enrolled(smtpSettings, [
        { waitDays: 2, instruction: 'Bump with the pilot.', review: 'required' },
        { waitDays: 3, instruction: 'Last note.', review: 'required' },
      ]);
      await toDue(key, run.id, 2);
      clock.advance(-DAY);
      await pass();
      const [queued] = await review(key);
      assert.deepEqual([queued.runId, queued.number, queued.of, queued.leadName], [run.id, 2, 3, 'Grace Hopper']);
      assert.equal(asked[0]!.instruction, 'Bump with the pilot.');
      assert.equal(asked[0]!.earlier.length, 1);

      // Only while AWAITING_APPROVAL, and only a follow-up that exists.
      assertProblem(await t.api('POST', `/api/v1/runs/${run.id}/touches/3/approve`, { key, body: {} }), 409, 'invalid_state');
      assertProblem(await t.api('POST', `/api/v1/runs/${run.id}/touches/9/approve`, { key, body: {} }), 409, 'invalid_state');
      assertProblem(await t.api('POST', `/api/v1/runs/${run.id}/touches/1/approve`, { key, body: {} }), 400, 'invalid_request');

      const edited = await t.api('PATCH', `/api/v1/runs/${run.id}/touches/2/draft`, { key, body: { body: 'Hi Grace, a short edit.' } });
      assert.equal(edited.status, 200, edited.text);
      assert.deepEqual([edited.json.data[1].draft.version, edited.json.data[1].draft.body], [2, 'Hi Grace, a short edit.']);

      const again = await t.api('POST', `/api/v1/runs/${run.id}/touches/2/reject`, { key, body: { regenerate: true, feedback: 'mention the pilot' } });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.data[1].status, 'SCHEDULED');
      await pass();
      assert.equal(asked.at(-1)!.feedback, 'mention the pilot');
      const rewritten = await touchIs(key, run.id, 2, 'AWAITING_APPROVAL');
      assert.equal(rewritten[1].draft.version, 3);
      assert.match(rewritten[1].draft.body, /mention the pilot/);

      // Skipped: the next follow-up counts its wait from now.
      const skipped = await t.api('POST', `/api/v1/runs/${run.id}/touches/2/reject`, { key, body: {} });
      assert.equal(skipped.status, 200, skipped.text);
      assert.deepEqual([skipped.json.data[1].status, skipped.json.data[1].skipReason], ['SKIPPED', 'rejected']);
      assert.ok(skipped.json.data[2].dueAt > clock.now().toISOString());
      assert.deepEqual(await review(key), []);
      // The run's own draft is touch 1's: the follow-up's versions are not the run's.
      const shown = (await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data;
      assert.equal(shown.emailDraft.version, 1);
      assert.equal((await t.api('GET', `/api/v1/runs/${run.id}/drafts`, { key })).json.data.length, 1);
    });

    it('tries a follow-up whose writer failed again once its claim runs out', async () => {
      const smtpSettings = { smtp: { host: smtp.host, port: smtp.port, security: 'none' as const } };
      const { key, run } = await enrolled(smtpSettings, [{ waitDays: 1, instruction: 'Bump.', review: 'required' }]);
      await toDue(key, run.id, 2);
      const failing = async () => { throw new Error('the model is down'); };
      const failed = await runSchedulerPass(t.database.db, clock, failing);
      assert.deepEqual([failed.claimed, failed.failed, failed.written], [1, 1, 0]);
      assert.equal((await touches(key, run.id))[1].status, 'SCHEDULED');
      assert.equal((await pass()).claimed, 0, 'claimed, so not taken again at once');
      clock.advance(5 * 60_000);
      assert.equal((await pass()).written, 1);
      await touchIs(key, run.id, 2, 'AWAITING_APPROVAL');
    });

    it('holds the thread while paused and goes on when resumed, by hand or when the pause ends', async () => {
      const smtpSettings = { smtp: { host: smtp.host, port: smtp.port, security: 'none' as const } };
      const { key, run } = await enrolled(smtpSettings, [{ waitDays: 1, instruction: 'Bump.', review: 'auto' }]);
      const paused = await t.api('POST', `/api/v1/runs/${run.id}/sequence/pause`, { key, body: {} });
      assert.equal(paused.status, 200, paused.text);
      assert.equal(paused.json.data.sequence.status, 'PAUSED');
      await toDue(key, run.id, 2);
      clock.advance(DAY);
      await pass();
      assert.equal((await touches(key, run.id))[1].status, 'SCHEDULED', 'nothing is written while paused');
      assertProblem(await t.api('POST', `/api/v1/runs/${run.id}/sequence/pause`, { key, body: {} }), 409, 'invalid_state');
      const resumed = await t.api('POST', `/api/v1/runs/${run.id}/sequence/resume`, { key, body: {} });
      assert.equal(resumed.json.data.sequence.status, 'ACTIVE');
      assert.equal(resumed.json.data.sequence.nextTouchAt, clock.now().toISOString(), 'due no earlier than the resumption');
      await pass();
      await pass();
      await touchIs(key, run.id, 2, 'SENT');

      // A pause with an end resumes by itself at the scheduler's next pass after it.
      const second = await enrolled(smtpSettings, [{ waitDays: 1, instruction: 'Bump.', review: 'auto' }]);
      const until = new Date(clock.now().getTime() + 3 * DAY).toISOString();
      const timed = await t.api('POST', `/api/v1/runs/${second.run.id}/sequence/pause`, { key: second.key, body: { until } });
      assert.equal(timed.json.data.sequence.pausedUntil, until);
      clock.set(until);
      await pass();
      assert.equal((await t.api('GET', `/api/v1/runs/${second.run.id}`, { key: second.key })).json.data.sequence.status, 'ACTIVE');
      await pass();
      await pass();
      await touchIs(second.key, second.run.id, 2, 'SENT');
      const events = (await t.database.db.selectFrom('run_events').select('type').where('run_id', '=', second.run.id).orderBy('seq').execute()).map((e) => e.type);
      assert.ok(events.indexOf('sequence.paused') < events.indexOf('sequence.resumed'));
      // Integrators hear of each: the enrolment, the pause and resumption, the follow-up sent (the endpoint was set before).
      const hooks = (await t.database.db.selectFrom('webhook_events').select('type').where('workspace_id', '=', second.workspaceId)
        .execute()).map((e) => e.type).filter((type) => type.startsWith('sequence.') || type.startsWith('touch.')).sort();
      assert.deepEqual(hooks, ['sequence.enrolled', 'sequence.paused', 'sequence.resumed', 'touch.drafted', 'touch.sent', 'touch.sent']);
    });

    it('saves touch 1 and its follow-up to a Dovecot mailbox\'s Drafts as one conversation', async (c) => {
      if (!existsSync(DOVECOT)) return c.skip('Dovecot is not installed');
      const dovecot = await startDovecot();
      try {
        const imap = { imap: { host: dovecot.host, port: dovecot.port, security: 'none' as const, user: dovecot.user, password: dovecot.password } };
        const { key, run } = await enrolled(imap, [{ waitDays: 1, instruction: 'Bump.', review: 'auto' }], 'mailbox');
        await toDue(key, run.id, 2);
        await pass();
        await pass();
        await touchIs(key, run.id, 2, 'SENT');
        const drafts = await Promise.all((await dovecot.messages('Drafts')).map(async (m) => ({ flags: m.flags, mail: await simpleParser(m.raw) })));
        assert.equal(drafts.length, 2);
        const [first, second] = drafts;
        assert.ok(first!.flags.includes('\\Draft') && second!.flags.includes('\\Draft'));
        assert.equal(second!.mail.subject, `Re: ${first!.mail.subject}`);
        assert.equal(second!.mail.inReplyTo, first!.mail.messageId);
        assert.deepEqual([second!.mail.references].flat(), [first!.mail.messageId]);
        assert.equal(second!.mail.to && 'value' in second!.mail.to ? second!.mail.to.value[0]?.address : null,
          first!.mail.to && 'value' in first!.mail.to ? first!.mail.to.value[0]?.address : undefined);
      } finally {
        await dovecot.stop();
      }
    });
  });
}
