// One-click unsubscribe (DESIGN §15) against a real SMTP server, on both backends: the message as sent carries
// List-Unsubscribe and List-Unsubscribe-Post exactly as RFC 8058 asks and the footer in its plain text; its link,
// posted as a mail provider posts it, suppresses the address (200, again and again), a GET changes nothing, a forged
// token gets a 404 page; the next approval to that address is refused, a delivery queued before the unsubscribe ends
// SUPPRESSED unsent, also when the unsubscribe or an import commits while a worker is about to claim it; a 5xx to RCPT
// TO bounces.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { systemClock } from '../../src/clock.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { saveMailSettings, type MailSettingsInput } from '../../src/domain/mail-settings/settings.ts';
import { importSuppressions } from '../../src/domain/suppressions/list.ts';
import { suppressAddress } from '../../src/domain/suppressions/suppress.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { assertProblem, createCall, createLead, pollUntil, startRun } from '../http/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

interface Fixture {
  t: TestApp;
  workspaceId: string;
  key: string;
}

async function fixture(t: TestApp, smtp: TestSmtpServer, input: MailSettingsInput = {}): Promise<Fixture> {
  const ws = await t.workspace('pro', 'Analytical Engines Ltd');
  const f = { t, workspaceId: ws.id, key: (await t.key(ws.id)).key };
  await t.database.db.transaction().execute((trx) => saveMailSettings(trx, f.workspaceId, {
    fromName: 'Acme Sales', fromAddress: 'sales@acme.test', postalAddress: '1 Main Street\nSpringfield, IL 62701',
    smtp: { host: smtp.host, port: smtp.port, security: 'none' }, ...input,
  }, t.deps.secrets(), null, systemClock));
  return f;
}

async function awaitingApproval(f: Fixture, email: string): Promise<any> {
  const lead = await createLead(f.t, f.key, { name: 'Ada Lovelace', companyName: 'Analytical Engines', email });
  const call = await createCall(f.t, f.key, lead.id);
  const run = await startRun(f.t, f.key, lead.id, call.id);
  const done = await waitForRun(f.t, f.key, run.id, atRest);
  assert.equal(done.status, 'AWAITING_APPROVAL');
  return done;
}

const approve = (f: Fixture, runId: string) => f.t.api('POST', `/api/v1/runs/${runId}/approve`, { key: f.key, body: { deliver: 'send' } });
const deliveryReaches = (f: Fixture, runId: string, statuses: string[]) =>
  waitForRun(f.t, f.key, runId, (r) => statuses.includes(r.emailDraft?.delivery?.status), 30_000);

/** What a mail provider does with List-Unsubscribe-Post: `curl -X POST -d 'List-Unsubscribe=One-Click' URL`. */
const oneClick = (url: string) => fetch(url, {
  method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual',
});

const suppressed = (t: TestApp, workspaceId: string) =>
  t.database.db.selectFrom('suppressions').selectAll().where('workspace_id', '=', workspaceId).execute();

/**
 * Until a transaction waits for the advisory lock of `key` (src/domain/suppressions/entries.ts) in this test's database:
 * other databases of the same server have locks of their own.
 */
const waitingFor = (t: TestApp, key: string) => pollUntil(async () => Number((await sql<{ n: string }>`
  SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(${key}, 0)`.execute(t.database.db)).rows[0]!.n),
(n) => n > 0, { what: 'a worker waiting to claim', timeoutMs: 20_000 });

function startJobRunner(t: TestApp): JobRunner {
  return new JobRunner({
    database: t.database, clock: systemClock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
    handlers: [deliveryHandler({ leaseMs: 10_000, retry: { maxAttempts: 3, delay: (_attempt, hint) => hint ?? 50 } })], pollMs: 50, drainMs: 1_000,
  });
}

for (const kind of BACKENDS) {
  describe(`one-click unsubscribe (${kind})`, () => {
    let t: TestApp;
    let runner: JobRunner | null = null;
    const servers: TestSmtpServer[] = [];
    const server = async (options: Parameters<typeof startSmtpServer>[0] = {}) => {
      const s = await startSmtpServer(options);
      servers.push(s);
      return s;
    };

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true, secretsKey: randomBytes(32) } });
      await t.startWorker();
      runner = startJobRunner(t);
      await runner.start();
    });
    afterEach(async () => { for (const s of servers.splice(0)) await s.close(); });
    after(async () => {
      await runner?.stop();
      await t?.close();
    });

    // The links name PUBLIC_URL; the test's server listens on a port of its own.
    const local = (url: string) => `${t.url}${new URL(url).pathname}`;

    it('sends both headers as RFC 8058 asks and the footer; the link, posted as a provider posts it, suppresses the address', async () => {
      const smtp = await server();
      const f = await fixture(t, smtp);
      const run = await awaitingApproval(f, 'Ada@Example.net');
      assert.equal((await approve(f, run.id)).status, 200);
      const [mail] = await smtp.waitFor(1);
      await deliveryReaches(f, run.id, ['DELIVERED']);

      const listUnsubscribe = mail!.raw.toString('utf8').match(/^List-Unsubscribe: (.*)$/m)?.[1];
      assert.match(listUnsubscribe ?? '', /^<https?:\/\/[^>]+\/unsubscribe\/[A-Za-z0-9_-]{43}>\r?$/);
      assert.equal(mail!.raw.toString('utf8').match(/^List-Unsubscribe-Post: (.*?)\r?$/m)?.[1], 'List-Unsubscribe=One-Click');
      const url = /<(http[^>]+)>/.exec(listUnsubscribe!)![1]!;
      // mailparser reads them as a mail client would: List-* headers under `list`.
      const list = mail!.parsed.headers.get('list') as any;
      assert.equal(list?.unsubscribe?.url, url);
      assert.deepEqual(mail!.parsed.headerLines.filter((h) => h.key.startsWith('list-')).map((h) => h.key).sort(),
        ['list-unsubscribe', 'list-unsubscribe-post']);
      // The footer: the company (the workspace's name), its postal address on one line, and the line offering to stop.
      const text = mail!.parsed.text ?? '';
      assert.match(text, /Analytical Engines Ltd, 1 Main Street, Springfield, IL 62701/);
      assert.ok(text.includes(`unsubscribe here: ${url}`), text);

      // A scanner opens the link: the page names the masked address and changes nothing.
      const page = await fetch(local(url));
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /ad\*\*\*@example\.net/);
      assert.match(html, /<form method="post"/);
      assert.doesNotMatch(html, /(src|href)=|url\(/, 'no resource from elsewhere');
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.equal((await suppressed(t, f.workspaceId)).length, 0);

      // An integrator listening for unsubscribes (an endpoint on a public address given as an IP: nothing is resolved).
      const hook = await f.t.api('POST', '/api/v1/webhooks', { key: f.key, body: { url: 'https://93.184.215.14/hook', events: ['recipient.unsubscribed'] } });
      assert.equal(hook.status, 201, hook.text);

      const first = await oneClick(local(url));
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('location'), null);
      const entries = await suppressed(t, f.workspaceId);
      assert.deepEqual(entries.map((e) => [e.email, e.reason, e.source]), [['ada@example.net', 'unsubscribed', 'unsubscribe_link']]);
      // Again and again: 200, one entry, one audit entry.
      assert.equal((await oneClick(local(url))).status, 200);
      const empty = await fetch(local(url), { method: 'POST' });
      assert.equal(empty.status, 200);
      assert.equal((await suppressed(t, f.workspaceId)).length, 1);
      const events = await t.database.db.selectFrom('webhook_events').select(['type', 'payload']).where('workspace_id', '=', f.workspaceId).execute();
      assert.deepEqual(events.map((e) => e.type), ['recipient.unsubscribed'], 'one event, however often it is posted');
      const payload = typeof events[0]!.payload === 'string' ? JSON.parse(events[0]!.payload) : events[0]!.payload;
      assert.equal(payload.data.email, 'ada@example.net');
      const audit = await t.database.db.selectFrom('audit_log').select(['action', 'target_id']).where('workspace_id', '=', f.workspaceId)
        .where('action', '=', 'recipient.unsubscribed').execute();
      assert.deepEqual(audit.map((a) => a.target_id), [entries[0]!.id]);

      // The lead shows "Do not contact", read alone and in a page of leads.
      const lead = (await f.t.api('GET', `/api/v1/leads/${run.leadId}`, { key: f.key })).json;
      assert.equal((lead.data ?? lead).doNotContact, true);
      const leads = (await f.t.api('GET', '/api/v1/leads?q=Ada', { key: f.key })).json.data;
      assert.ok(leads.length > 0 && leads.every((l: any) => l.doNotContact === true), JSON.stringify(leads));

      // The next approval to that address is refused, and says why.
      const next = await awaitingApproval(f, 'ada@example.net');
      const refused = await approve(f, next.id);
      assertProblem(refused, 409, 'recipient_suppressed');
      assert.equal(refused.json.reason, 'unsubscribed');
      const still = await f.t.api('GET', `/api/v1/runs/${next.id}`, { key: f.key });
      assert.equal(still.json.data?.status ?? still.json.status, 'AWAITING_APPROVAL');
    });

    it('with an unsubscribe address set, List-Unsubscribe carries its mailto: after the link', async () => {
      const smtp = await server();
      const f = await fixture(t, smtp, { unsubscribeAddress: 'unsubscribe@acme.test' });
      const run = await awaitingApproval(f, 'Grace@Example.org');
      assert.equal((await approve(f, run.id)).status, 200);
      const [mail] = await smtp.waitFor(1);
      const line = mail!.parsed.headerLines.find((h) => h.key === 'list-unsubscribe')!.line.replace(/\r?\n[ \t]+/g, ' ');
      assert.match(line, /^List-Unsubscribe: <https?:\/\/[^>]+\/unsubscribe\/[A-Za-z0-9_-]{43}>, <mailto:unsubscribe@acme\.test\?subject=unsubscribe%20Grace%40Example\.org>$/);
      const list = mail!.parsed.headers.get('list') as any;
      assert.equal(list?.unsubscribe?.mail, 'unsubscribe@acme.test?subject=unsubscribe%20Grace%40Example.org');
      assert.match(list?.unsubscribe?.url ?? '', /\/unsubscribe\//);
      assert.equal(mail!.raw.toString('utf8').match(/^List-Unsubscribe-Post: (.*?)\r?$/m)?.[1], 'List-Unsubscribe=One-Click');
      await deliveryReaches(f, run.id, ['DELIVERED']);
    });

    it('a forged or foreign token: a 404 page, and nothing changes', async () => {
      const smtp = await server();
      const f = await fixture(t, smtp);
      for (const token of [randomBytes(32).toString('base64url'), 'short', 'x'.repeat(90)]) {
        const get = await fetch(`${t.url}/unsubscribe/${token}`);
        assert.equal(get.status, 404);
        assert.match(await get.text(), /does not work/);
        const post = await oneClick(`${t.url}/unsubscribe/${token}`);
        assert.equal(post.status, 404);
      }
      assert.equal((await suppressed(t, f.workspaceId)).length, 0);
    });

    it('a delivery queued before the address was suppressed ends SUPPRESSED, unsent', async () => {
      const smtp = await server();
      const f = await fixture(t, smtp);
      const run = await awaitingApproval(f, 'grace@example.org');
      await runner!.stop();
      try {
        assert.equal((await approve(f, run.id)).status, 200);
        await t.database.db.transaction().execute((trx) => suppressAddress(trx, {
          workspaceId: f.workspaceId, email: 'GRACE@example.org', reason: 'unsubscribed', source: 'unsubscribe_link', at: new Date(),
        }));
      } finally {
        runner = startJobRunner(t);
        await runner.start();
      }
      const done = await deliveryReaches(f, run.id, ['SUPPRESSED']);
      assert.match(done.emailDraft.delivery.error, /suppression list/);
      assert.equal(smtp.attempts, 0);
      const events = await t.database.db.selectFrom('run_events').select('type').where('run_id', '=', run.id).orderBy('seq').execute();
      assert.ok(events.some((e) => e.type === 'draft.suppressed'));
    });

    it('a domain on the list refuses the approval too', async () => {
      const smtp = await server();
      const f = await fixture(t, smtp);
      const added = await t.api('POST', '/api/v1/suppressions', { key: f.key, body: { domain: 'Blocked.Example', reason: 'complained' } });
      assert.equal(added.status, 201, added.text);
      const run = await awaitingApproval(f, 'someone@blocked.example');
      const refused = await approve(f, run.id);
      assertProblem(refused, 409, 'recipient_suppressed');
      assert.equal(refused.json.reason, 'complained');
    });

    if (kind === 'postgres') {
      it('an unsubscribe committed while a worker is about to claim the delivery: not sent', async () => {
        const smtp = await server();
        const f = await fixture(t, smtp);
        const run = await awaitingApproval(f, 'race@example.com');
        // The unsubscribe's transaction holds the address's lock when the worker comes to claim: the claim waits for it.
        let release!: () => void;
        const held = new Promise<void>((resolve) => { release = resolve; });
        const unsubscribing = t.database.db.transaction().execute(async (trx) => {
          await suppressAddress(trx, { workspaceId: f.workspaceId, email: 'race@example.com', reason: 'unsubscribed', source: 'unsubscribe_link', at: new Date() });
          await held;
        });
        assert.equal((await approve(f, run.id)).status, 200);
        // The worker is waiting on the address's lock: about to claim.
        await waitingFor(t, `suppression:${f.workspaceId}:race@example.com`);
        release();
        await unsubscribing;
        const done = await deliveryReaches(f, run.id, ['SUPPRESSED', 'DELIVERED']);
        assert.equal(done.emailDraft.delivery.status, 'SUPPRESSED');
        assert.equal(smtp.attempts, 0);
        // Nothing of the claim outlived its refusal: no slot of the sender was taken for it.
        const delivery = await t.database.db.selectFrom('email_deliveries').select(['slot_taken_at', 'attempts']).where('run_id', '=', run.id).executeTakeFirstOrThrow();
        assert.deepEqual(delivery, { slot_taken_at: null, attempts: 0 });
        const counters = await t.database.db.selectFrom('sender_counters').select('sent').where('workspace_id', '=', f.workspaceId).execute();
        assert.ok(counters.every((c) => c.sent === 0));
      });
    }

    it('an import committed while a delivery to one of its addresses is being claimed: not sent', async () => {
      const smtp = await server();
      const f = await fixture(t, smtp);
      const run = await awaitingApproval(f, 'imported@example.com');
      await runner!.stop();
      assert.equal((await approve(f, run.id)).status, 200);
      // The import has written its rows and holds the list, uncommitted, when the worker comes to claim the delivery.
      let release!: () => void;
      const held = new Promise<void>((resolve) => { release = resolve; });
      let written!: () => void;
      const wrote = new Promise<void>((resolve) => { written = resolve; });
      const file = { emails: ['imported@example.com', 'other@example.com'], domains: ['elsewhere.example'], invalid: 0, tooMany: false, malformed: false };
      const importing = t.database.db.transaction().execute(async (trx) => {
        const summary = await importSuppressions(trx, f.workspaceId, file, new Date());
        written();
        await held;
        return summary;
      });
      await wrote;
      runner = startJobRunner(t);
      const starting = runner.start();
      try {
        if (kind === 'postgres') {
          // The worker waits for the list's lock: without it the claim would read the list before the import commits.
          await waitingFor(t, `suppressions:${f.workspaceId}`);
        }
        // On PGlite the claim queues behind the import's transaction for the one connection.
      } finally {
        release();
      }
      assert.equal((await importing).added, 3);
      await starting;
      const done = await deliveryReaches(f, run.id, ['SUPPRESSED', 'DELIVERED']);
      assert.equal(done.emailDraft.delivery.status, 'SUPPRESSED');
      assert.match(done.emailDraft.delivery.error, /suppression list \(imported\)/);
      assert.equal(smtp.attempts, 0);
    });

    it('a 5xx to RCPT TO bounces the delivery and suppresses the address', async () => {
      const smtp = await server({ unknownRecipients: ['nobody@example.com'] });
      const f = await fixture(t, smtp);
      const run = await awaitingApproval(f, 'nobody@example.com');
      assert.equal((await approve(f, run.id)).status, 200);
      const done = await deliveryReaches(f, run.id, ['BOUNCED', 'FAILED']);
      assert.equal(done.emailDraft.delivery.status, 'BOUNCED');
      assert.match(done.emailDraft.delivery.error, /550/);
      const entries = await suppressed(t, f.workspaceId);
      assert.deepEqual(entries.map((e) => [e.email, e.reason, e.source]), [['nobody@example.com', 'bounced', 'bounce']]);
      const events = await t.database.db.selectFrom('run_events').select('type').where('run_id', '=', run.id).orderBy('seq').execute();
      assert.ok(events.some((e) => e.type === 'draft.bounced'));
    });
  });
}
