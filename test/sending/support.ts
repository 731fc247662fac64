// What the sending tests share (DESIGN §14): an app on an injected clock, a workspace that sends through a real
// smtp-server on loopback, its sending settings, runs of new leads awaiting approval, and job runners that send.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ManualClock } from '../../src/clock.ts';
import { saveMailSettings } from '../../src/domain/mail-settings/settings.ts';
import { changeSendingSettings, type SendingSettingsInput } from '../../src/domain/sending/settings.ts';
import type { Database } from '../../src/db/database.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { silentLogger, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, startRun } from '../http/support.ts';
import type { TestSmtpServer } from '../support/smtp-server.ts';

export interface SendingFixture {
  workspaceId: string;
  key: string;
}

export async function sendingWorkspace(t: TestApp, smtp: TestSmtpServer, sending: SendingSettingsInput): Promise<SendingFixture> {
  const ws = await t.workspace('pro');
  const { key } = await t.key(ws.id);
  await t.database.db.transaction().execute(async (trx) => {
    await saveMailSettings(trx, ws.id, {
      fromName: 'Acme Sales', fromAddress: 'sales@acme.test', smtp: { host: smtp.host, port: smtp.port, security: 'none' },
    }, t.deps.secrets(), null, t.deps.clock);
    await changeSendingSettings(trx, ws.id, sending, null, t.deps.clock);
  });
  return { workspaceId: ws.id, key };
}

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

/** Runs of new leads (each with its own address), every one awaiting approval. */
export async function runsAwaitingApproval(t: TestApp, f: SendingFixture, count: number, lead: Record<string, unknown> = {}): Promise<any[]> {
  const runs = [];
  for (let i = 0; i < count; i += 1) {
    const created = await createLead(t, f.key, { name: 'Ada Lovelace', email: `lead-${randomBytes(4).toString('hex')}@example.net`, ...lead });
    const call = await createCall(t, f.key, created.id);
    runs.push(await startRun(t, f.key, created.id, call.id));
  }
  const done = [];
  for (const run of runs) {
    const settled = await waitForRun(t, f.key, run.id, atRest, 60_000);
    assert.equal(settled.status, 'AWAITING_APPROVAL');
    done.push(settled);
  }
  return done;
}

/** A job runner of e-mail deliveries on the test's clock, on `database`: each one stands for a worker process. */
export function deliveryRunner(t: TestApp, clock: ManualClock, random?: () => number, database: Database = t.database): JobRunner {
  return new JobRunner({
    database, clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
    handlers: [deliveryHandler({ leaseMs: 30_000, concurrency: 4, clock, retry: { maxAttempts: 6, delay: () => 50 }, ...(random ? { random } : {}) })],
    pollMs: 20, drainMs: 1_000,
  });
}

/** The workspace's deliveries by status. */
export async function deliveriesOf(t: TestApp, workspaceId: string) {
  return t.database.db.selectFrom('email_deliveries')
    .select(['id', 'run_id', 'status', 'scheduled_for', 'waiting_for', 'delivered_at', 'message_id', 'attempts'])
    .where('workspace_id', '=', workspaceId).orderBy('scheduled_for').execute();
}

export const countBy = (rows: Array<{ status: string }>) =>
  rows.reduce<Record<string, number>>((counts, row) => ({ ...counts, [row.status]: (counts[row.status] ?? 0) + 1 }), {});
