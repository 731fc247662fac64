// Taking back an approval (src/domain/runs/decisions.ts undoApproval), on both backends: an approval held for its
// undo window queues its delivery's job that far ahead; undoing it deletes the job and the delivery and puts the
// draft and the run back to awaiting approval, and a second approval then makes a delivery of its own; a job a
// runner has taken, or an approval without a delivery, cannot be undone (409) and nothing changes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { systemClock } from '../../src/clock.ts';
import type { DB } from '../../src/db/schema.ts';
import { EMAIL_DELIVER } from '../../src/domain/runs/deliveries.ts';
import { approveRun, undoApproval } from '../../src/domain/runs/decisions.ts';
import { newMessageId } from '../../src/mail/message.ts';
import { loadMailTransport, saveMailSettings } from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, startRun } from '../http/support.ts';

const HOLD_MS = 60_000;

for (const kind of BACKENDS) {
  describe(`undoing an approval (${kind})`, () => {
    let t: TestApp;
    let workspaceId: string;
    let userId: string;
    let key: string;

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true, secretsKey: randomBytes(32) } });
      await t.startWorker();
      const ws = await t.workspace('pro');
      workspaceId = ws.id;
      userId = ws.adminUserId;
      key = (await t.key(ws.id)).key;
      // An SMTP server nobody listens on: no runner of deliveries runs here, so nothing is ever sent.
      await t.database.db.transaction().execute((trx) => saveMailSettings(trx, workspaceId, {
        fromName: 'Acme Sales', fromAddress: 'sales@acme.test', smtp: { host: '127.0.0.1', port: 9, security: 'none' },
      }, t.deps.secrets(), null, systemClock));
    });
    after(() => t?.close());

    async function awaitingApproval(): Promise<string> {
      const lead = await createLead(t, key, { name: 'Ada Lovelace', email: 'ada@example.net' });
      const call = await createCall(t, key, lead.id);
      const run = await startRun(t, key, lead.id, call.id);
      const done = await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL' || r.status === 'FAILED');
      assert.equal(done.status, 'AWAITING_APPROVAL');
      return run.id;
    }

    const db = () => t.database.db;
    const approve = (runId: string, deliver: 'send' | 'none', holdMs = HOLD_MS) => db().transaction().execute((trx) =>
      approveRun(trx, workspaceId, runId, { keyId: null, userId }, systemClock, {
        deliver, senderUserId: userId, holdMs,
        transport: (db: Kysely<DB>) => loadMailTransport(db, workspaceId, t.deps.secrets(), t.deps.config), newMessageId,
        postalAddress: t.deps.config.mailPostalAddress,
      }));
    const undo = (runId: string) => db().transaction().execute((trx) => undoApproval(trx, workspaceId, runId, systemClock));
    const deliveriesOf = (runId: string) => db().selectFrom('email_deliveries').select('id').where('run_id', '=', runId).execute();
    const jobsOf = async (runId: string) => {
      const deliveries = await deliveriesOf(runId);
      if (deliveries.length === 0) return [];
      return db().selectFrom('jobs').selectAll()
        .where('kind', '=', EMAIL_DELIVER).where('key', 'in', deliveries.map((d) => d.id)).execute();
    };

    it('holds the delivery for the window, and an undo leaves the run as it was before the approval', async () => {
      const runId = await awaitingApproval();
      const before = Date.now();
      const approved = await approve(runId, 'send');
      assert.equal(approved.status, 'COMPLETED');
      assert.equal(approved.emailDraft?.delivery?.status, 'QUEUED');
      const [job] = await jobsOf(runId);
      assert.ok(job && job.available_at.getTime() >= before + HOLD_MS, 'the job may start only after the window');

      const undone = await undo(runId);
      assert.equal(undone.status, 'AWAITING_APPROVAL');
      assert.equal(undone.emailDraft?.status, 'DRAFT');
      assert.equal(undone.emailDraft?.delivery, null);
      const draft = await db().selectFrom('email_drafts').selectAll().where('run_id', '=', runId).executeTakeFirstOrThrow();
      assert.deepEqual([draft.decided_at, draft.decided_by_user_id], [null, null]);
      assert.equal((await db().selectFrom('jobs').select('id').where('id', '=', job.id).execute()).length, 0, 'the job is gone');
      assert.equal((await deliveriesOf(runId)).length, 0);

      // Approved again, it gets a delivery of its own; a second undo works as the first.
      const again = await approve(runId, 'send');
      assert.equal(again.emailDraft?.delivery?.status, 'QUEUED');
      assert.equal((await jobsOf(runId)).length, 1);
      assert.equal((await undo(runId)).status, 'AWAITING_APPROVAL');
    });

    it('refuses once a runner has taken the job, or with nothing to take back; nothing changes', async () => {
      const runId = await awaitingApproval();
      await approve(runId, 'send');
      const [job] = await jobsOf(runId);
      // What a runner's claim does to the row (src/jobs/queue.ts claimedBy).
      await db().updateTable('jobs').set({ status: 'RUNNING', attempts: 1 }).where('id', '=', job!.id).execute();
      await assert.rejects(undo(runId), (error: any) => error.code === 'invalid_state');
      const still = await db().selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirstOrThrow();
      assert.equal(still.status, 'COMPLETED');
      assert.equal((await jobsOf(runId)).length, 1, 'the job is left to its runner');

      const silent = await awaitingApproval();
      await approve(silent, 'none');
      await assert.rejects(undo(silent), (error: any) => error.code === 'invalid_state');
      const other = await awaitingApproval();
      const refused = (error: any) => error.code === 'invalid_state';
      await assert.rejects(undo(other), refused, 'not approved: nothing to take back');
    });
  });
}
