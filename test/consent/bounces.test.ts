// Bounces found in the inbox (DESIGN §15), on both backends, against a private Dovecot: delivery status notifications
// (RFC 3464) in the shapes Postfix, Exim, Microsoft 365 and Gmail send, each naming a delivered e-mail's Message-ID
// with a permanent failure, make that delivery BOUNCED (`draft.bounced`) and suppress its address (`bounced`, from
// `dsn`); a delay (4.x.x), a report naming no e-mail of the workspace, and an ordinary reply bounce nothing. The
// delivery-status reader itself is checked on folded, odd-cased and oversized input.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { checkReplies } from '../../src/mail/replies.ts';
import { readDsn, statusRecipients } from '../../src/mail/dsn.ts';
import { looksLikeReport, readBounces } from '../../src/mail/bounces.ts';
import { createCpuPool } from '../../src/cpu/pool.ts';
import type { ReplyMessage } from '../../src/mail/reply-reading.ts';
import { loadMailTransport, saveMailSettings, type ImapSettings } from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, db, startRun } from '../http/support.ts';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';

const CRLF = '\r\n';

/** The e-mail leadrun sent, as a report returns it (whole, or its headers). */
const original = (messageId: string, to: string) => [
  'From: Acme Sales <sales@acme.test>', `To: ${to}`, 'Subject: A pilot outline', `Message-ID: ${messageId}`,
  'Date: Mon, 7 Dec 2026 10:00:00 +0000', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', 'Hi Ada,', '',
].join(CRLF);

function postfix(messageId: string, to: string, status = '5.1.1', action = 'failed'): string {
  const b = '4F1A2B3C.1733565600/mail.acme.test';
  return [
    'From: MAILER-DAEMON@mail.acme.test (Mail Delivery System)', 'Subject: Undelivered Mail Returned to Sender', 'To: sales@acme.test',
    'Auto-Submitted: auto-replied', `Message-Id: <${randomBytes(6).toString('hex')}@mail.acme.test>`, 'Date: Mon, 7 Dec 2026 10:00:05 +0000',
    'MIME-Version: 1.0', `Content-Type: multipart/report; report-type=delivery-status;${CRLF}\tboundary="${b}"`, '',
    'This is a MIME-encapsulated message.', '', `--${b}`, 'Content-Description: Notification', 'Content-Type: text/plain; charset=us-ascii', '',
    'This is the mail system at host mail.acme.test.', '', "I'm sorry to have to inform you that your message could not", 'be delivered to one or more recipients.', '',
    `--${b}`, 'Content-Description: Delivery report', 'Content-Type: message/delivery-status', '',
    'Reporting-MTA: dns; mail.acme.test', 'X-Postfix-Queue-ID: 4F1A2B3C', 'X-Postfix-Sender: rfc822; sales@acme.test',
    'Arrival-Date: Mon,  7 Dec 2026 10:00:00 +0000 (UTC)', '', `Final-Recipient: rfc822; ${to}`, `Original-Recipient: rfc822;${to}`,
    `Action: ${action}`, `Status: ${status}`, 'Remote-MTA: dns; mx.example.net',
    `Diagnostic-Code: smtp; 550 ${status} <${to}>: Recipient address rejected:`, '    User unknown in virtual mailbox table', '',
    `--${b}`, 'Content-Description: Undelivered Message', 'Content-Type: message/rfc822', '', original(messageId, to), `--${b}--`, '',
  ].join(CRLF);
}

function exim(messageId: string, to: string): string {
  const b = '1733565600-eximdsn-1804289383';
  return [
    'From: Mail Delivery System <Mailer-Daemon@mx.exim.example>', 'To: sales@acme.test', 'Subject: Mail delivery failed: returning message to sender',
    `Message-Id: <E1t${randomBytes(5).toString('hex')}-000Abc-1x@mx.exim.example>`, 'Date: Mon, 07 Dec 2026 10:00:06 +0000', 'Auto-Submitted: auto-replied',
    `Content-Type: multipart/report; report-type=delivery-status; boundary=${b}`, 'MIME-Version: 1.0', '',
    `--${b}`, 'Content-type: text/plain; charset=us-ascii', '', 'This message was created automatically by mail delivery software.', '',
    'A message that you sent could not be delivered to one or more of its', 'recipients. This is a permanent error. The following address(es) failed:', '',
    `  ${to}`, '    host mx.example.org [192.0.2.10]', '    SMTP error from remote mail server after RCPT TO:<' + to + '>:', '    550 5.1.1 No such user', '',
    `--${b}`, 'Content-type: message/delivery-status', '', 'Reporting-MTA: dns; mx.exim.example', '',
    `Action: failed`, `Final-Recipient: rfc822;${to}`, 'Status: 5.0.0', 'Remote-MTA: dns; mx.example.org',
    'Diagnostic-Code: smtp; 550 5.1.1 No such user', '',
    `--${b}`, 'Content-type: message/rfc822', '', original(messageId, to), `--${b}--`, '',
  ].join(CRLF);
}

function microsoft365(messageId: string, to: string): string {
  const b = '_000_AM0PR01MB1234abcd_';
  const alt = '_001_AM0PR01MB1234abcd_';
  return [
    'From: Microsoft Outlook <postmaster@contoso.onmicrosoft.com>', 'To: <sales@acme.test>', 'Subject: Undeliverable: A pilot outline',
    'Date: Mon, 7 Dec 2026 10:00:07 +0000', `Message-ID: <${randomUUID()}@AM0PR01MB1234.eurprd01.prod.outlook.com>`,
    'Content-Language: en-US', 'X-MS-Exchange-Message-Is-Ndr:', 'Auto-Submitted: auto-replied', 'MIME-Version: 1.0',
    `Content-Type: multipart/report;${CRLF}\tboundary="${b}";${CRLF}\treport-type=delivery-status`, '',
    `--${b}`, `Content-Type: multipart/alternative; differences=Content-Type;${CRLF}\tboundary="${alt}"`, '',
    `--${alt}`, 'Content-Type: text/plain; charset="us-ascii"', 'Content-Transfer-Encoding: quoted-printable', '',
    "Your message to ${to} couldn't be delivered.".replace('${to}', to), '', `--${alt}`, 'Content-Type: text/html; charset="us-ascii"', '',
    '<html><body><p>Your message couldn&#39;t be delivered.</p></body></html>', `--${alt}--`, '',
    `--${b}`, 'Content-Type: message/delivery-status', '',
    'Reporting-MTA: dns;AM0PR01MB1234.eurprd01.prod.outlook.com', 'Received-From-MTA: dns;mail.acme.test', 'Arrival-Date: Mon, 7 Dec 2026 10:00:01 +0000', '',
    `Final-recipient: RFC822; ${to.toUpperCase()}`, 'Action: failed', 'Status: 5.1.10',
    'Diagnostic-code: smtp; 550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    `X-Display-Name: Ada Lovelace`, '',
    `--${b}`, 'Content-Type: text/rfc822-headers', '',
    ...original(messageId, to).split(CRLF).slice(0, 7), '', `--${b}--`, '',
  ].join(CRLF);
}

function gmail(messageId: string, to: string): string {
  const b = '000000000000a1b2c3d4e5f60718';
  return [
    'From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>', 'To: sales@acme.test', 'Auto-Submitted: auto-replied',
    'Subject: Delivery Status Notification (Failure)', `References: ${messageId}`, `In-Reply-To: ${messageId}`,
    `Message-ID: <${randomBytes(8).toString('hex')}.googlemail.com>`, 'Date: Mon, 07 Dec 2026 02:00:08 -0800', 'MIME-Version: 1.0',
    `Content-Type: multipart/report; boundary="${b}"; report-type=delivery-status`, '',
    `--${b}`, 'Content-Type: text/plain; charset="UTF-8"', '', 'Address not found', '',
    `Your message wasn't delivered to ${to} because the address couldn't be found.`, '',
    `--${b}`, 'Content-Type: message/delivery-status', '',
    'Reporting-MTA: dns; googlemail.com', 'Received-From-MTA: dns; sales@acme.test', 'Arrival-Date: Mon, 07 Dec 2026 02:00:04 -0800',
    'X-Original-Message-ID: ' + messageId, '', `Final-Recipient: rfc822; ${to}`, 'Action: failed', 'Status: 5.1.1',
    'Remote-MTA: dns; gmail-smtp-in.l.google.com. (2a00:1450:400c:c0b::1b, the server for the domain gmail.com.)',
    'Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist. Please try', ' 550-5.1.1 double-checking the recipient\'s email address.',
    'Last-Attempt-Date: Mon, 07 Dec 2026 02:00:08 -0800', '',
    `--${b}`, 'Content-Type: message/rfc822', '', original(messageId, to), `--${b}--`, '',
  ].join(CRLF);
}

describe('the delivery-status reader', () => {
  it('reads folded, odd-cased fields and skips the per-message group', () => {
    const text = 'Reporting-MTA: dns; a\r\n\r\nfinal-RECIPIENT: RFC822; <Ada@Example.NET>\r\naction: FAILED\r\nstatus: 5.1.1 (user unknown)\r\nDiagnostic-Code: smtp;\r\n  550 no\r\n';
    assert.deepEqual(statusRecipients(text), [{ address: 'ada@example.net', action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 no' }]);
  });

  it('reads a large part in bounded time and keeps a bounded number of recipients', () => {
    const groups = Array.from({ length: 5000 }, (_, i) => `Final-Recipient: rfc822; r${i}@example.com\r\nAction: failed\r\nStatus: 5.1.1`).join('\r\n\r\n');
    // The part is read to STATUS_PART_MAX (64 KiB) whatever its size: the 5 MB past it are never looked at.
    const read = statusRecipients(`Reporting-MTA: dns; a\r\n\r\n${groups}${'x'.repeat(5_000_000)}`);
    assert.ok(read.length <= 50);
  });

  it('survives 1 MiB of its worst cases: folded lines without end, and a report of boundaries without parts', async () => {
    const folded = `Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; ada@example.net\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp;${'\r\n x'.repeat(350_000)}`;
    assert.ok(folded.length >= 1024 * 1024);
    const [recipient] = statusRecipients(folded);
    assert.equal(recipient?.status, '5.1.1');
    assert.ok(recipient!.diagnostic!.length <= 1000);
    const boundary = 'b';
    const hostile = Buffer.from([
      'From: MAILER-DAEMON@mx.example', 'Subject: Undelivered Mail', 'MIME-Version: 1.0',
      `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`, '',
      `--${boundary}\r\n`.repeat(220_000), `--${boundary}--`, '',
    ].join('\r\n'));
    assert.ok(hostile.length >= 1024 * 1024);
    // The parser refuses so many parts; the reply check reads reports in the CPU pool and passes such a one over, with
    // the good report beside it still read.
    await assert.rejects(readDsn(hostile));
    const pool = createCpuPool({ budgetMs: 10_000, threads: 1 });
    try {
      const message = (source: Buffer): ReplyMessage => ({ source, envelope: undefined, internalDate: undefined, now: new Date() });
      const read = await readBounces(pool, [message(hostile), message(Buffer.from(postfix('<m1@acme.test>', 'ada@example.net')))]);
      assert.deepEqual(read.map((dsn) => dsn.messageIds), [['m1@acme.test']]);
    } finally {
      await pool.close();
    }
  });

  it('takes the four shapes, and only reports', async () => {
    for (const [name, make] of Object.entries({ postfix, exim, microsoft365, gmail })) {
      const raw = Buffer.from(make('<m1@acme.test>', 'ada@example.net'));
      assert.ok(looksLikeReport(raw), name);
      const dsn = await readDsn(raw);
      assert.deepEqual(dsn?.messageIds, ['m1@acme.test'], name);
      assert.equal(dsn?.recipients[0]?.address, 'ada@example.net', name);
      assert.equal(dsn?.recipients[0]?.action, 'failed', name);
      assert.match(dsn?.recipients[0]?.status ?? '', /^5\./, name);
    }
    const plain = Buffer.from('From: a@b.example\r\nSubject: multipart/report delivery-status\r\nContent-Type: text/plain\r\n\r\nhello\r\n');
    assert.equal(await readDsn(plain), null);
  });
});

for (const kind of BACKENDS) {
  describe(`bounces in the inbox (${kind})`, () => {
    let t: TestApp;
    let dovecot: Dovecot;
    let workspaceId: string;
    let key: string;
    let imap: ImapSettings;

    /** A run whose e-mail to `email` was delivered with a Message-ID of its own. */
    async function deliveredTo(email: string) {
      const lead = await createLead(t, key, { name: 'Ada Lovelace', email, companyName: 'Analytical Engines' });
      const call = await createCall(t, key, lead.id);
      const started = await startRun(t, key, lead.id, call.id);
      const run = await waitForRun(t, key, started.id, (r) => r.status === 'AWAITING_APPROVAL');
      const messageId = `<${randomBytes(10).toString('hex')}@acme.test>`;
      const now = new Date();
      const id = randomUUID();
      await db(t).insertInto('email_deliveries').values({
        id, workspace_id: workspaceId, run_id: run.id, draft_id: run.emailDraft.id, sender_user_id: null, method: 'send',
        status: 'DELIVERED', message_id: messageId, attempts: 1, queued_at: now, delivered_at: now, error: null, response: '250 ok',
      }).execute();
      return { deliveryId: id, runId: run.id as string, messageId };
    }
    const statusOf = async (deliveryId: string) =>
      (await db(t).selectFrom('email_deliveries').select(['status', 'error']).where('id', '=', deliveryId).executeTakeFirstOrThrow());
    const check = () => checkReplies(db(t), workspaceId, imap, t.deps.clock, { allowPrivateHosts: true, cpu: t.deps.cpu });

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
    });
    after(async () => {
      await Promise.all([t?.close(), dovecot?.stop()]);
    });

    it('a permanent failure from Postfix, Exim, Microsoft 365 or Gmail bounces the delivery it names and suppresses its address', async () => {
      const shapes = { postfix, exim, microsoft365, gmail };
      const sent: Record<string, Awaited<ReturnType<typeof deliveredTo>> & { email: string }> = {};
      for (const name of Object.keys(shapes)) {
        const email = `${name}-${randomBytes(3).toString('hex')}@example.net`;
        sent[name] = { ...await deliveredTo(email), email };
      }
      for (const [name, make] of Object.entries(shapes)) await dovecot.deliver(make(sent[name]!.messageId, sent[name]!.email));
      await check();

      for (const [name, delivery] of Object.entries(sent)) {
        const row = await statusOf(delivery.deliveryId);
        assert.equal(row.status, 'BOUNCED', name);
        assert.match(row.error ?? '', /^Bounced: 5\./, name);
        const events = await db(t).selectFrom('run_events').select('type').where('run_id', '=', delivery.runId).execute();
        assert.ok(events.some((e) => e.type === 'draft.bounced'), name);
        const entry = await db(t).selectFrom('suppressions').selectAll().where('workspace_id', '=', workspaceId)
          .where('email', '=', delivery.email).executeTakeFirst();
        assert.deepEqual([entry?.reason, entry?.source], ['bounced', 'dsn'], name);
      }
      const run = (await t.api('GET', `/api/v1/runs/${sent.gmail!.runId}`, { key })).json.data;
      assert.equal(run.emailDraft.delivery.status, 'BOUNCED');
      // Read again (a rescan): nothing changes twice.
      const audits = await db(t).selectFrom('audit_log').select('id').where('workspace_id', '=', workspaceId).where('action', '=', 'draft.bounced').execute();
      assert.equal(audits.length, 4);
    });

    it('a delay, a report naming no e-mail of the workspace, and a reply bounce nothing', async () => {
      const delayed = await deliveredTo(`delayed-${randomBytes(3).toString('hex')}@example.net`);
      const replied = await deliveredTo(`replied-${randomBytes(3).toString('hex')}@example.net`);
      await dovecot.deliver(postfix(delayed.messageId, 'delayed@example.net', '4.4.1', 'delayed'));
      await dovecot.deliver(gmail('<unknown@elsewhere.example>', 'someone@example.net'));
      await dovecot.deliver([
        'From: Ada <ada@example.net>', 'To: sales@acme.test', 'Subject: Re: A pilot outline', `In-Reply-To: ${replied.messageId}`,
        `Message-ID: <${randomBytes(6).toString('hex')}@example.net>`, 'Date: Mon, 7 Dec 2026 11:00:00 +0000', 'Content-Type: text/plain', '',
        'Sounds good: delivery-status of the pilot is fine, multipart/report next week.', '',
      ].join(CRLF));
      await check();
      assert.equal((await statusOf(delayed.deliveryId)).status, 'DELIVERED');
      assert.equal((await statusOf(replied.deliveryId)).status, 'DELIVERED');
      const entries = await db(t).selectFrom('suppressions').select('email').where('workspace_id', '=', workspaceId)
        .where('email', 'in', ['delayed@example.net', 'someone@example.net']).execute();
      assert.deepEqual(entries, []);
    });
  });
}
