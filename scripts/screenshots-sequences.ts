// `npm run screenshots:sequences`: the pictures of follow-ups and sending (DESIGN §13, §14) for docs/screenshots,
// taken from a real `leadrun serve` on PostgreSQL sending through a real SMTP server on loopback, at laptop width
// (1440×900): Settings / Sequences; a run's thread with touch 1 sent, its follow-up awaiting approval and the next
// one after it; Replies to answer with the response drafted to an interested reply; the Outbox with an e-mail
// waiting for the send window. The follow-up and the response are written by the scheduler's pass at their time,
// run on the server's database as the sequences.tick job runs it (scripts/screenshots.ts makes the other pages).
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { ManualClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/database.ts';
import { runSchedulerPass } from '../src/domain/sequences/scheduler.ts';
import { writeFollowUp } from '../src/agent/follow-up/index.ts';
import { createMigratedPostgresDatabase } from '../test/helpers.ts';
import { startSmtpServer } from '../test/support/smtp-server.ts';
import { openWebUi } from '../test/web/browser.ts';
import { TRANSCRIPT, waitFor, type SessionClient } from '../test/web/support.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/screenshots');

async function shoot(page: Page, name: string): Promise<void> {
  await page.evaluate('document.fonts.ready');
  await page.waitForTimeout(350);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), animations: 'disabled' });
  process.stdout.write(`  docs/screenshots/${name}.png\n`);
}

async function runAwaitingApproval(client: SessionClient, lead: Record<string, string>): Promise<string> {
  const created = await client.ok('POST', '/api/v1/leads', lead);
  const call = await client.ok('POST', `/api/v1/leads/${created.id}/calls`, { transcript: TRANSCRIPT, title: 'Discovery call' });
  const run = await client.ok('POST', '/api/v1/runs', { leadId: created.id, callId: call.id });
  await waitFor(async () => (await client.ok('GET', `/api/v1/runs/${run.id}`)).data.status === 'AWAITING_APPROVAL', 'the draft', 60_000);
  return run.id;
}

async function main(): Promise<void> {
  const smtp = await startSmtpServer();
  const target = await createMigratedPostgresDatabase();
  const database = await openDatabase({ databaseUrl: target.url });
  const ui = await openWebUi({
    env: { SMTP_URL: `smtp://${smtp.host}:${smtp.port}`, MAIL_FROM: 'Acme Sales <sales@acme.test>', ALLOW_PRIVATE_HOSTS: 'true', DATABASE_URL: target.url },
    server: { storage: 'embedded' },
    context: { viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1, locale: 'en-GB', timezoneId: 'Europe/London', colorScheme: 'light' },
  });
  try {
    const { page, server } = ui;
    const client = ui.client!;
    process.stdout.write('Taking screenshots:\n');
    const { data: sequence } = await client.ok('POST', '/api/v1/sequences', { name: 'Pilot follow-up', steps: [
      { waitDays: 2, instruction: 'Offer the two-week pilot on the Rotterdam lane; one question.', review: 'required' },
      { waitDays: 4, instruction: 'A short last note: leave the door open.', review: 'auto' },
    ] });
    await page.goto(`${server.url}/settings/sequences`);
    await page.getByRole('region', { name: 'Pilot follow-up' }).waitFor();
    await shoot(page, 'sequences');

    // The thread: touch 1 sent, the follow-up written at its due time and waiting for review, the last one after it.
    const runId = await runAwaitingApproval(client, { name: 'Priya Raman', email: 'priya.raman@northwind-freight.com', companyName: 'Northwind Freight', timeZone: 'Europe/Amsterdam' });
    await client.ok('POST', `/api/v1/runs/${runId}/approve`, { deliver: 'send', sequenceId: sequence.id });
    await smtp.waitFor(1, 30_000);
    const touches = await waitFor(async () => {
      const list = (await client.ok('GET', `/api/v1/runs/${runId}/touches`)).data;
      return list[1]?.dueAt ? list : null;
    }, 'touch 2 to be due', 30_000);
    const counts = await runSchedulerPass(database.db, new ManualClock(touches[1].dueAt), writeFollowUp);
    if (counts.written !== 1) throw new Error(`the scheduler wrote ${counts.written} follow-ups, not 1`);
    await page.goto(`${server.url}/runs/${runId}`);
    const thread = page.locator('.thread-card');
    await thread.getByRole('listitem', { name: 'Follow-up 2 of 3' }).getByText('Needs review').waitFor();
    await thread.scrollIntoViewIfNeeded();
    await shoot(page, 'run-thread');

    // Priya answers: the reply read as `other`, then marked interested by a person, which has its response drafted.
    const first = await database.db.selectFrom('email_deliveries').select(['id', 'workspace_id']).where('run_id', '=', runId).where('touch', '=', 1)
      .executeTakeFirstOrThrow();
    const replyId = randomUUID();
    await database.db.insertInto('email_replies').values({
      id: replyId, workspace_id: first.workspace_id, delivery_id: first.id, run_id: runId, message_id: `${randomUUID()}@northwind-freight.com`,
      from_address: 'Priya Raman <priya.raman@northwind-freight.com>', subject: 'Re: the Rotterdam lane', received_at: new Date(), found_at: new Date(),
      snippet: 'Thanks, this is useful. Could we talk on Tuesday? And would the pilot cover our Antwerp volumes too?',
      text: 'Thanks, this is useful. Could we talk on Tuesday? And would the pilot cover our Antwerp volumes too?', classification: 'other',
    }).execute();
    await client.ok('POST', `/api/v1/replies/${replyId}/classification`, { classification: 'interested' });
    await runSchedulerPass(database.db, new ManualClock(new Date()), writeFollowUp);
    await page.goto(`${server.url}/runs/review`);
    await page.getByRole('group', { name: 'Decide on the response' }).waitFor({ timeout: 30_000 });
    await shoot(page, 'replies-to-answer');

    // The Outbox: an e-mail approved for the next send window, and one for a time asked for.
    await client.ok('PUT', '/ui/api/settings/sending', { days: [((new Date().getUTCDay() + 1) % 7) || 7], start: '08:00', end: '18:00', timeZone: 'Europe/London' });
    const waiting = await runAwaitingApproval(client, { name: 'Lukas Weber', email: 'lukas.weber@kiefer-bau.de', companyName: 'Kiefer Bau', timeZone: 'Europe/Berlin' });
    await client.ok('POST', `/api/v1/runs/${waiting}/approve`, { deliver: 'send', sendAt: 'next_window' });
    const later = await runAwaitingApproval(client, { name: 'Aiko Tanaka', email: 'aiko@harborline.jp', companyName: 'Harborline', timeZone: 'Asia/Tokyo' });
    await client.ok('POST', `/api/v1/runs/${later}/approve`, { deliver: 'send', sendAt: new Date(Date.now() + 3 * 86_400_000).toISOString() });
    await page.goto(`${server.url}/outbox`);
    await page.getByRole('heading', { name: 'Outbox', level: 1 }).waitFor();
    await waitFor(async () => (await page.locator('tbody tr').count()) === 2, 'two waiting e-mails');
    await shoot(page, 'outbox');
  } finally {
    await ui.close();
    await database.close();
    await target.drop();
    await smtp.close();
  }
}

await main();
// test/helpers.ts (for its PostgreSQL database) loads node:test, whose runner would keep the process waiting.
process.exit(0);
