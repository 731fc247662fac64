// Replies found in the sender's inbox (src/mail/replies.ts), on both backends, against a private Dovecot: a reply
// to a delivered e-mail is recorded once however often the inbox is read, and shows on the run, the lead, the run's
// events and the audit log; replies to unknown or undelivered e-mails are ignored; a 5 MB message, one with 10,000
// References and one without any text part are read within bounds; a 1 MiB HTML-only reply of hostile markup is read in a
// CPU pool thread, and a message over the CPU budget still counts, by its envelope; the cursor survives a renumbered inbox and a
// check is bounded in messages; the job handler runs again in 60 s, keeps its error, and ends without IMAP. Each reply is
// stored with what it says (an absence with its return day, an unsubscribe below a quoted e-mail, a referral, a bounce
// found by the Message-ID its report returns), read offline or by a model, and listed by GET /api/v1/replies.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import type { ClaimedJob, JobContext } from '../../src/jobs/types.ts';
import { RetryableError } from '../../src/jobs/errors.ts';
import { createCpuPool, type CpuPool } from '../../src/cpu/pool.ts';
import { createModelReplyClassifier, type ReplyClassifier } from '../../src/agent/replies/model.ts';
import { checkReplies, REPLY_CHECK_INTERVAL_MS, REPLY_CHECK_KIND, replyCheckHandler, scheduleReplyChecks } from '../../src/mail/replies.ts';
import { htmlReplyText } from '../../src/mail/reply-html.ts';
import { MAX_BYTES_PER_MESSAGE, replySnippet } from '../../src/mail/reply-reading.ts';
import type { AppError } from '../../src/domain/errors.ts';
import { changeMailSettings } from '../../src/domain/mail-settings/change.ts';
import {
  loadMailTransport, MailSettingsUnreadable, saveMailSettings, type ImapSettings, type MailSettingsInput,
} from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, db, startRun } from '../http/support.ts';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';
import { startCapturingImapServer } from '../support/imap-capture.ts';
import { chat, messageText, startOpenAIServer, status } from '../support/openai-server.ts';

const allow = { allowPrivateHosts: true };

function reply(options: { inReplyTo?: string; references?: string; from?: string; date?: string; body?: string; headers?: string[]; contentType?: string }): string {
  return [
    `From: ${options.from ?? 'Daniel Ng <daniel@acme.example>'}`,
    'To: Rep Example <rep@example.com>',
    'Subject: Re: A pilot outline for Acme',
    `Message-ID: <${randomBytes(8).toString('hex')}@acme.example>`,
    `Date: ${options.date ?? 'Tue, 25 Nov 2025 09:30:00 +0000'}`,
    ...(options.inReplyTo ? [`In-Reply-To: ${options.inReplyTo}`] : []),
    ...(options.references ? [`References: ${options.references}`] : []),
    ...(options.headers ?? []),
    'MIME-Version: 1.0',
    `Content-Type: ${options.contentType ?? 'text/plain; charset=utf-8'}`,
    '',
    options.body ?? [
      'Thanks, the outline looks right. Can we start the pilot on 1 December?',
      '',
      'On Tue, 24 Nov 2026 at 10:00, Rep Example <rep@example.com>',
      'wrote:',
      '> Hi Daniel,',
      '> the pilot outline and two references, as promised.',
    ].join('\r\n'),
    '',
  ].join('\r\n');
}

describe('replySnippet', () => {
  it('keeps what the reply says and leaves out the quoted e-mail', () => {
    assert.equal(replySnippet('Sounds good.\n\nOn Mon, 1 Jan 2026, Rep <r@x> wrote:\n> earlier\n> text'), 'Sounds good.');
    assert.equal(replySnippet('> quoted first\nMy answer\n> more quoted\nand more'), 'My answer and more');
    assert.equal(replySnippet('Yes.\n\n-----Original Message-----\nFrom: Rep'), 'Yes.');
    assert.equal(replySnippet('Yes.\n\nFrom: Rep Example\nSent: Monday\nTo: Daniel'), 'Yes.');
    assert.equal(replySnippet('Short.\n-- \nDaniel Ng, COO'), 'Short.');
    const long = replySnippet('word '.repeat(200));
    assert.ok(long.length <= 300 && long.endsWith('…'), long);
    assert.equal(replySnippet(''), '');
  });

  it('reads an HTML-only reply as lines of text, without its styles and the e-mail it quotes', () => {
    const gmail = '<div dir="ltr">Count us <b>in</b>.<br>Thursday works.</div><div class="gmail_quote"><div class="gmail_attr">On Mon, Rep wrote:</div>'
      + '<blockquote class="gmail_quote">Hi Daniel</blockquote></div>';
    assert.equal(replySnippet(htmlReplyText(gmail)), 'Count us in. Thursday works.');
    const outlook = '<html><head><style>p{color:red}</style><title>Re</title></head><body><p>Yes &amp; thanks.</p>'
      + '<div id="divRplyFwdMsg"><b>From:</b> Rep</div><div>quoted</div></body></html>';
    assert.equal(replySnippet(htmlReplyText(outlook)), 'Yes & thanks.');
  });
});

for (const kind of BACKENDS) {
  describe(`replies (${kind})`, () => {
    let t: TestApp;
    let dovecot: Dovecot;
    let workspaceId: string;
    let key: string;
    let imap: ImapSettings;

    /** A run that reached AWAITING_APPROVAL, and a delivery of its draft in the given state. */
    async function deliveredRun(status: 'DELIVERED' | 'QUEUED' | 'FAILED' = 'DELIVERED', ws = { workspaceId, key }) {
      const { workspaceId, key } = ws;
      const lead = await createLead(t, key, { name: 'Daniel Ng', email: 'daniel@acme.example', companyName: 'Acme' });
      const call = await createCall(t, key, lead.id);
      const started = await startRun(t, key, lead.id, call.id);
      const run = await waitForRun(t, key, started.id, (r) => r.status === 'AWAITING_APPROVAL');
      const messageId = `<${randomBytes(10).toString('hex')}@leadrun.test>`;
      const now = new Date();
      await db(t).insertInto('email_deliveries').values({
        id: randomUUID(), workspace_id: workspaceId, run_id: run.id, draft_id: run.emailDraft.id, sender_user_id: null, method: 'send',
        status, message_id: messageId, attempts: 1, queued_at: now, delivered_at: status === 'DELIVERED' ? now : null, error: null, response: '250 ok',
      }).execute();
      return { leadId: lead.id as string, runId: run.id as string, messageId };
    }

    const check = (options: { maxMessages?: number; cpu?: CpuPool; classifier?: ReplyClassifier; workspace?: string } = {}) =>
      checkReplies(db(t), options.workspace ?? workspaceId, imap, t.deps.clock, { ...allow, cpu: t.deps.cpu, ...options });
    const repliesOf = (runId: string) => db(t).selectFrom('email_replies').selectAll().where('run_id', '=', runId).execute();
    type ImapInput = NonNullable<MailSettingsInput['imap']>;
    /** The workspace's reply check as a runner holds it, and a context to run it in. */
    async function replyCheckJob(): Promise<{ job: ClaimedJob; ctx: JobContext }> {
      // Due in an hour, so that the test's worker leaves it to the test.
      const inAnHour = new Date(Date.now() + 3_600_000);
      await db(t).transaction().execute((trx) => scheduleReplyChecks(trx, workspaceId, inAnHour));
      const row = await db(t).selectFrom('jobs').selectAll().where('kind', '=', REPLY_CHECK_KIND)
        .where('key', '=', workspaceId).where('status', 'in', ['QUEUED', 'RUNNING']).executeTakeFirstOrThrow();
      await db(t).updateTable('jobs').set({ status: 'RUNNING' }).where('id', '=', row.id).execute();
      const ctx: JobContext = {
        db: db(t), clock: t.deps.clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu,
        logger: silentLogger, signal: new AbortController().signal, owner: 'test', finish: async () => true,
      };
      const job: ClaimedJob = {
        id: row.id, kind: row.kind, key: row.key, workspaceId, payload: {}, attempt: 1, maxAttempts: row.max_attempts,
      };
      return { job, ctx };
    }

    before(async () => {
      [t, dovecot] = await Promise.all([startTestApp(kind, { config: { allowPrivateHosts: true } }), startDovecot()]);
      await t.startWorker();
      const ws = await t.workspace('pro');
      workspaceId = ws.id;
      key = (await t.key(workspaceId)).key;
      await db(t).transaction().execute((trx) => saveMailSettings(trx, workspaceId, {
        imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password },
      }, t.deps.secrets(), null, t.deps.clock));
      imap = (await loadMailTransport(db(t), workspaceId, t.deps.secrets(), t.deps.config)).imap!;
      assert.ok(imap);
    });
    after(async () => {
      await Promise.all([t?.close(), dovecot?.stop()]);
    });

    it('finds a reply once, and shows it on the run, the lead, the events and the audit log', async () => {
      const { leadId, runId, messageId } = await deliveredRun();
      await dovecot.deliver(reply({ inReplyTo: messageId, references: `<older@acme.example> ${messageId}` }));
      const first = await check();
      assert.equal(first.found, 1);
      assert.equal(first.read, 1);
      const second = await check();
      assert.deepEqual({ found: second.found, read: second.read, rescanned: second.rescanned }, { found: 0, read: 0, rescanned: false });

      const rows = await repliesOf(runId);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.from_address, 'Daniel Ng <daniel@acme.example>');
      assert.equal(rows[0]!.subject, 'Re: A pilot outline for Acme');

      const run = (await t.api('GET', `/api/v1/runs/${runId}`, { key })).json.data;
      assert.deepEqual(run.reply, {
        id: rows[0]!.id,
        receivedAt: '2025-11-25T09:30:00.000Z',
        from: 'Daniel Ng <daniel@acme.example>',
        snippet: 'Thanks, the outline looks right. Can we start the pilot on 1 December?',
        classification: rows[0]!.classification, returnsOn: null, followUpAfter: null, classifiedBy: 'engine',
      });
      assert.deepEqual(run.replies, [run.reply]);
      const listed = (await t.api('GET', `/api/v1/runs?leadId=${leadId}`, { key })).json.data;
      assert.deepEqual(listed[0].reply, run.reply);
      const lead = (await t.api('GET', `/api/v1/leads/${leadId}`, { key })).json;
      assert.equal((lead.data ?? lead).lastReplyAt, '2025-11-25T09:30:00.000Z');

      const events = await db(t).selectFrom('run_events').select('type').where('run_id', '=', runId).where('type', '=', 'draft.replied').execute();
      assert.equal(events.length, 1);
      const audit = await db(t).selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId).where('action', '=', 'draft.replied').execute();
      assert.equal(audit.filter((a) => a.target_id === runId).length, 1);
      assert.equal(audit[0]!.source, 'system');

      // Read with EXAMINE: the rep's own client still sees the reply as unread.
      const inbox = await dovecot.messages('INBOX');
      assert.ok(inbox.every((m) => !m.flags.includes('\\Seen')), JSON.stringify(inbox.map((m) => m.flags)));
    });

    it('stores what each reply says, offline or by a model, and lists them by class and date, page by page, in the workspace', async () => {
      // A workspace of its own: its list holds only these replies.
      const ws = await t.workspace('pro');
      const own = { workspaceId: ws.id, key: (await t.key(ws.id)).key };
      const { runId, messageId } = await deliveredRun('DELIVERED', own);
      const quoted = 'On Mon, 2 Mar 2026 at 09:00, Rep Example <rep@example.com>\r\nwrote:\r\n> Would Tuesday work?\r\n> Reply "unsubscribe" to hear no more.';
      const dsnBoundary = 'DSN-boundary-1';
      await dovecot.deliver(reply({ inReplyTo: messageId, date: 'Mon, 9 Mar 2026 07:30:00 +0100', headers: ['Auto-Submitted: auto-generated'],
        body: 'Ich bin bis einschließlich 14.03. nicht im Büro und habe keinen Zugriff auf meine E-Mails.' }));
      await dovecot.deliver(reply({ inReplyTo: messageId, date: 'Tue, 10 Mar 2026 09:00:00 +0000', body: `Please take me off your list.\r\n\r\n${quoted}` }));
      await dovecot.deliver(reply({ inReplyTo: messageId, date: 'Wed, 11 Mar 2026 09:00:00 +0000', body: 'Please talk to Maria Lopez (maria.lopez@acme.example), our CFO.' }));
      await dovecot.deliver(reply({ inReplyTo: messageId, date: 'Thu, 12 Mar 2026 09:00:00 +0000', body: `Circle back in Q3, please.\r\n\r\n${quoted}` }));
      // A delivery status notification names the returned e-mail only in the headers it attaches.
      await dovecot.deliver(reply({
        from: 'Mail Delivery System <MAILER-DAEMON@mx.acme.example>', date: 'Fri, 13 Mar 2026 09:00:00 +0000',
        contentType: `multipart/report; report-type=delivery-status; boundary="${dsnBoundary}"`,
        body: [`--${dsnBoundary}`, 'Content-Type: text/plain', '', 'Your message could not be delivered.', `--${dsnBoundary}`,
          'Content-Type: message/delivery-status', '', 'Reporting-MTA: dns; mx.acme.example', '', 'Final-Recipient: rfc822; daniel@acme.example',
          'Action: failed', 'Status: 5.1.1', `--${dsnBoundary}`, 'Content-Type: text/rfc822-headers', '', 'From: Rep Example <rep@example.com>',
          `Message-ID: ${messageId}`, 'Subject: A pilot outline for Acme', `--${dsnBoundary}--`].join('\r\n'),
      }));
      assert.equal((await check({ workspace: own.workspaceId })).found, 5);

      const list = async (query: string, key = own.key) => t.api('GET', `/api/v1/replies${query}`, { key });
      const all = (await list('')).json.data;
      assert.deepEqual(all.map((r: any) => [r.classification, r.returnsOn, r.followUpAfter, r.person, r.classifiedBy]), [
        ['bounce', null, null, null, 'engine'],
        ['not_now', null, '2026-07-01', null, 'engine'],
        ['referral', null, null, { name: 'Maria Lopez', email: 'maria.lopez@acme.example' }, 'engine'],
        ['unsubscribe', null, null, null, 'engine'],
        ['out_of_office', '2026-03-14', null, null, 'engine'],
      ]);
      assert.ok(all.every((r: any) => r.runId === runId && typeof r.leadId === 'string'));
      assert.equal(all[3].snippet, 'Please take me off your list.');
      assert.equal(all[4].receivedAt, '2026-03-09T06:30:00.000Z');

      // One class; since a day or an instant; pages linked by the Link header, keeping the filters.
      assert.deepEqual((await list('?classification=unsubscribe')).json.data.map((r: any) => r.id), [all[3].id]);
      assert.deepEqual((await list('?since=2026-03-12')).json.data.map((r: any) => r.id), [all[0].id, all[1].id]);
      assert.deepEqual((await list('?since=2026-03-11T09:00:00Z&classification=referral')).json.data.map((r: any) => r.id), [all[2].id]);
      const first = await list('?limit=2&since=2026-03-01');
      const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')![1]!;
      assert.match(next, /since=2026-03-01/);
      const second = await t.api('GET', next, { key: own.key });
      assert.deepEqual([...first.json.data, ...second.json.data].map((r: any) => r.id), all.slice(0, 4).map((r: any) => r.id));
      for (const bad of ['?since=yesterday', '?since=2026-02-31', '?classification=maybe', '?limit=0', '?cursor=forged']) {
        assert.equal((await list(bad)).status, 400, bad);
      }
      // Another workspace's key sees none of them.
      assert.ok(!(await list('', key)).json.data.some((r: any) => r.runId === runId));

      // With a model: its reading is stored; when it gives none, the offline reading stands.
      const model = await startOpenAIServer({ delayMs: 50 });
      try {
        const classifier = createModelReplyClassifier({ baseUrl: model.baseUrl, apiKey: null, model: 'm' });
        // It reads one reply as interested, and fails on every other.
        model.setDefault((request) => (messageText(request, 'user').includes('numbers')
          ? chat({ classification: 'interested', returnsOn: null, followUpAfter: null, person: null }) : status(500)));
        await dovecot.deliver(reply({ inReplyTo: messageId, date: 'Mon, 16 Mar 2026 09:00:00 +0000', body: 'Hm. Tell me more about the numbers.' }));
        await dovecot.deliver(reply({ inReplyTo: messageId, date: 'Tue, 17 Mar 2026 09:00:00 +0000', body: 'Stop emailing me.' }));
        // More replies than are classified at once: the endpoint is sent a few at a time.
        for (let i = 0; i < 6; i++) await dovecot.deliver(reply({ inReplyTo: messageId, date: 'Sun, 15 Mar 2026 09:00:00 +0000', body: `Answer ${i}` }));
        assert.equal((await check({ workspace: own.workspaceId, classifier })).found, 8);
        assert.equal(model.requests.length, 8);
        assert.ok(model.maxInFlight >= 2 && model.maxInFlight <= 4, String(model.maxInFlight));
        const newest = (await list('?since=2026-03-16')).json.data.map((r: any) => [r.snippet, r.classification]);
        assert.deepEqual(newest, [['Stop emailing me.', 'unsubscribe'], ['Hm. Tell me more about the numbers.', 'interested']]);
        // An inbox read again by date: the replies already stored are not sent to the model again.
        await db(t).updateTable('mailbox_cursors').set({ uid_validity: 1 }).where('workspace_id', '=', own.workspaceId).execute();
        const again = await check({ workspace: own.workspaceId, classifier });
        assert.ok(again.rescanned && again.read >= 13 && again.found === 0, JSON.stringify(again));
        assert.equal(model.requests.length, 8);
      } finally {
        await model.close();
      }
      // The inbox is shared: the tests' own workspace reads past these messages, which answer none of its e-mails.
      assert.equal((await check()).found, 0);
    });

    it('ignores replies to unknown and to undelivered e-mails, and clamps a date in the future to now', async () => {
      const queued = await deliveredRun('QUEUED');
      await dovecot.deliver(reply({ inReplyTo: '<nobody-sent-this@elsewhere.example>' }));
      await dovecot.deliver(reply({ inReplyTo: queued.messageId }));
      const result = await check();
      assert.equal(result.read, 2);
      assert.equal(result.found, 0);
      assert.equal((await repliesOf(queued.runId)).length, 0);

      const { runId, messageId } = await deliveredRun();
      await dovecot.deliver(reply({ references: messageId.slice(1, -1), date: 'Fri, 1 Jan 2100 00:00:00 +0000' }));
      const before = Date.now();
      assert.equal((await check()).found, 1);
      const [row] = await repliesOf(runId);
      assert.ok(row!.received_at.getTime() >= before - 1000 && row!.received_at.getTime() <= Date.now(), row!.received_at.toISOString());
    });

    it('survives a 5 MB message, 10,000 References and a message without any text, within bounds', async () => {
      const big = await deliveredRun();
      const many = await deliveredRun();
      const textless = await deliveredRun();
      const html = await deliveredRun();
      await dovecot.deliver(reply({ inReplyTo: big.messageId, body: `Yes, let us talk.\r\n${'x'.repeat(998)}\r\n`.repeat(5 * 1024) }));
      const references = Array.from({ length: 10_000 }, (_, i) => `<ref-${i}-${randomBytes(4).toString('hex')}@thread.example>`).join('\r\n ');
      await dovecot.deliver(reply({ inReplyTo: many.messageId, references, body: 'Long thread, short answer.' }));
      await dovecot.deliver(reply({
        inReplyTo: textless.messageId,
        contentType: 'image/png',
        headers: ['Content-Transfer-Encoding: base64', 'Content-Disposition: attachment; filename="signed.png"'],
        body: randomBytes(3000).toString('base64').replace(/(.{76})/g, '$1\r\n'),
      }));
      await dovecot.deliver(reply({ inReplyTo: html.messageId, contentType: 'text/html; charset=utf-8', body: '<p>Count us <b>in</b>.</p><blockquote>old</blockquote>' }));
      const started = process.memoryUsage().rss;
      const result = await check();
      assert.equal(result.found, 4);
      assert.ok(process.memoryUsage().rss - started < 100 * 1024 * 1024, 'a check holds at most 64 KiB of each message');
      const [bigReply] = await repliesOf(big.runId);
      assert.ok(bigReply!.snippet.startsWith('Yes, let us talk.') && bigReply!.snippet.length <= 300, bigReply!.snippet);
      assert.equal((await repliesOf(many.runId)).length, 1);
      assert.equal((await repliesOf(textless.runId))[0]!.snippet, '');
      assert.match((await repliesOf(html.runId))[0]!.snippet, /^Count us in\./);
      assert.ok(MAX_BYTES_PER_MESSAGE <= 64 * 1024);
    });

    it('reads a 1 MiB HTML-only reply of hostile markup in a pool thread, and counts one over the CPU budget by its envelope', async () => {
      const hostile = await deliveredRun();
      // Tags nested past any parser's stack, an attribute that never closes, and entities: the worst an HTML reader meets.
      const markup = `<p>We are in &amp; ready.</p>${'<div><span><table><tr><td>'.repeat(20_000)}<a title="${'&lt;'.repeat(50_000)}`;
      const body = markup.padEnd(1024 * 1024, 'x').replace(/(.{998})/g, '$1\r\n');
      await dovecot.deliver(reply({ inReplyTo: hostile.messageId, contentType: 'text/html; charset=utf-8', body }));
      const result = await check();
      assert.equal(result.found, 1);
      const [read] = await repliesOf(hostile.runId);
      assert.equal(read!.from_address, 'Daniel Ng <daniel@acme.example>');
      assert.match(read!.snippet, /^We are in & ready\./);

      // A pool whose budget ends before any message is read: the reply still counts, from what the envelope says.
      const late = await deliveredRun();
      await dovecot.deliver(reply({ inReplyTo: late.messageId }));
      const tight = createCpuPool({ budgetMs: 1, threads: 1 });
      try {
        assert.equal((await check({ cpu: tight })).found, 1);
      } finally {
        await tight.close();
      }
      const [counted] = await repliesOf(late.runId);
      assert.deepEqual(
        { from: counted!.from_address, subject: counted!.subject, snippet: counted!.snippet, receivedAt: counted!.received_at.toISOString() },
        { from: 'Daniel Ng <daniel@acme.example>', subject: 'Re: A pilot outline for Acme', snippet: '', receivedAt: '2025-11-25T09:30:00.000Z' },
      );
    });

    it('reads at most maxMessages a check and goes on from there; a renumbered inbox is read again by date without duplicates', async () => {
      const { runId, messageId } = await deliveredRun();
      for (let i = 0; i < 3; i++) await dovecot.deliver(reply({ inReplyTo: messageId, body: `Answer ${i}` }));
      const first = await check({ maxMessages: 2 });
      const second = await check({ maxMessages: 2 });
      assert.deepEqual([first.read, second.read], [2, 1]);
      assert.equal((await repliesOf(runId)).length, 3);

      await db(t).updateTable('mailbox_cursors').set({ uid_validity: 1 }).where('workspace_id', '=', workspaceId).execute();
      const rescan = await check();
      assert.equal(rescan.rescanned, true);
      assert.ok(rescan.read >= 3);
      assert.equal(rescan.found, 0);
      assert.equal((await repliesOf(runId)).length, 3);
    });

    it('runs as a job: again in 60 s; a failed check keeps its error and is retried; without IMAP the job ends', async () => {
      const finished: string[] = [];
      const ctxOf = (jobId: string): JobContext => ({
        db: db(t), clock: t.deps.clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, signal: new AbortController().signal,
        owner: 'test',
        finish: async (trx: Transaction<DB>) => {
          const done = await trx.updateTable('jobs').set({ status: 'DONE', finished_at: new Date(), updated_at: new Date() })
            .where('id', '=', jobId).where('status', '=', 'RUNNING').returning('id').executeTakeFirst();
          if (done) finished.push(jobId);
          return done !== undefined;
        },
      });
      assert.equal(await db(t).transaction().execute((trx) => scheduleReplyChecks(trx, workspaceId)), true);
      assert.equal(await db(t).transaction().execute((trx) => scheduleReplyChecks(trx, workspaceId)), false, 'one live check per workspace');
      const row = await db(t).selectFrom('jobs').selectAll().where('kind', '=', REPLY_CHECK_KIND).where('key', '=', workspaceId).executeTakeFirstOrThrow();
      await db(t).updateTable('jobs').set({ status: 'RUNNING' }).where('id', '=', row.id).execute();
      const job: ClaimedJob = { id: row.id, kind: row.kind, key: row.key, workspaceId, payload: {}, attempt: 1, maxAttempts: row.max_attempts };

      const before = t.deps.clock.now().getTime();
      const outcome = await replyCheckHandler.run(job, ctxOf(row.id));
      assert.ok(outcome && outcome.again.getTime() >= before + REPLY_CHECK_INTERVAL_MS, JSON.stringify(outcome));
      // MAIL_REPLY_CHECK_SECONDS sets the interval.
      const quick = await replyCheckHandler.run(job, { ...ctxOf(row.id), config: { ...t.deps.config, replyCheckIntervalMs: 1000 } });
      assert.ok(quick && quick.again.getTime() <= t.deps.clock.now().getTime() + 1000, JSON.stringify(quick));

      await db(t).transaction().execute((trx) => saveMailSettings(trx, workspaceId, {
        imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: 'not the password' },
      }, t.deps.secrets(), null, t.deps.clock));
      await assert.rejects(replyCheckHandler.run(job, ctxOf(row.id)), (error: Error) =>
        error instanceof RetryableError && error.message === 'The server refused the user name or password.');
      const cursor = await db(t).selectFrom('mailbox_cursors').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
      assert.equal(cursor.error, 'The server refused the user name or password.');
      assert.ok(replyCheckHandler.retry.delay(2, null) > replyCheckHandler.retry.delay(1, null));

      await db(t).transaction().execute((trx) => saveMailSettings(trx, workspaceId, { imap: null }, t.deps.secrets(), null, t.deps.clock));
      assert.equal(await replyCheckHandler.run(job, ctxOf(row.id)), undefined);
      assert.deepEqual(finished, [row.id]);
      assert.equal(await db(t).transaction().execute((trx) => scheduleReplyChecks(trx, workspaceId)), false, 'nothing to check without IMAP');
      const jobs = await sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE kind = ${REPLY_CHECK_KIND}`.execute(db(t));
      assert.equal(jobs.rows[0]!.n, 1);
    });

    it('never sends the saved IMAP password elsewhere: not after a change, nor from a hand-edited row', async () => {
      const capture = await startCapturingImapServer();
      const save = (imap: ImapInput) =>
        db(t).transaction().execute((trx) =>
          saveMailSettings(trx, workspaceId, { imap }, t.deps.secrets(), null, t.deps.clock));
      try {
        const settings = {
          host: dovecot.host, port: dovecot.port, security: 'none' as const,
          user: dovecot.user, password: dovecot.password,
        };
        await save(settings);
        const { ctx, job } = await replyCheckJob();
        // The settings page's change of port without the password is refused, and the row still names Dovecot.
        const { password: _p, ...moved } = { ...settings, port: capture.port };
        await assert.rejects(db(t).transaction().execute((trx) => changeMailSettings(trx, workspaceId, { imap: moved },
          { secrets: t.deps.secrets, clock: t.deps.clock, config: t.deps.config }, null)), (error: AppError) =>
          error.code === 'invalid_request' && /imap\.password is required again/.test(error.message));
        assert.ok(await replyCheckHandler.run(job, ctx), 'the check still reads Dovecot');

        // A row whose server was changed behind the application's back (as the old settings page did) does not open.
        const changes = [
          { imap_port: capture.port },
          { imap_host: 'localhost', imap_port: capture.port },
          { imap_user: 'someone.else' },
        ];
        const setRow = (change: Record<string, unknown>) =>
          db(t).updateTable('mail_settings').set(change).where('workspace_id', '=', workspaceId).execute();
        for (const change of changes) {
          await setRow(change);
          await assert.rejects(replyCheckHandler.run(job, ctx), MailSettingsUnreadable, JSON.stringify(change));
          await save(settings);
        }
        // The same for a password saved for STARTTLS on the capturing server, its row then set to no encryption.
        await save({ ...settings, host: capture.host, port: capture.port, security: 'starttls' });
        await setRow({ imap_security: 'none' });
        await assert.rejects(replyCheckHandler.run(job, ctx), MailSettingsUnreadable);
        assert.equal(capture.heard(dovecot.password, dovecot.user), false, capture.lines.join('\n'));
        assert.ok(!capture.lines.some((line) => /LOGIN|AUTHENTICATE/i.test(line)), capture.lines.join('\n'));
      } finally {
        await capture.close();
      }
    });

    it('retries at once, not after the backoff, when the settings were saved while a failing check ran', async () => {
      const capture = await startCapturingImapServer();
      try {
        const settings = {
          host: capture.host, port: capture.port, security: 'none' as const, user: 'rep', password: 'not yet',
        };
        await db(t).transaction().execute((trx) =>
          saveMailSettings(trx, workspaceId, { imap: settings }, t.deps.secrets(), null, t.deps.clock));
        const { ctx, job } = await replyCheckJob();
        await assert.rejects(replyCheckHandler.run(job, ctx), (error: RetryableError) => error.retryAfterMs === null,
          'the backoff applies');
        capture.onSignIn = () => db(t).transaction().execute(async (trx) => {
          // A clock a second on: the save is not at the very instant of the one before.
          const aSecondOn = { now: () => new Date(Date.now() + 1000) } as typeof t.deps.clock;
          const mended = { ...settings, password: 'mended' };
          await saveMailSettings(trx, workspaceId, { imap: mended }, t.deps.secrets(), null, aSecondOn);
        });
        await assert.rejects(replyCheckHandler.run(job, ctx), (error: RetryableError) =>
          error instanceof RetryableError && error.retryAfterMs === 0, 'the mended settings are tried at once');
      } finally {
        await capture.close();
      }
    });
  });
}
