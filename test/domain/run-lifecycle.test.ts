// A run's lifecycle (src/domain/runs/lifecycle.ts): the transition tables say which run events integrators hear of,
// and applyTransition changes a row only from a state its transition leaves from, writing nothing else otherwise.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { RunEventType } from '../../src/db/schema.ts';
import { applyTransition, RUN, STEP, webhookOf } from '../../src/domain/runs/lifecycle.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers.ts';

describe('the run lifecycle tables', () => {
  it('name the webhook event of every run event integrators hear of, and of no other', () => {
    const heard: Partial<Record<RunEventType, string>> = {
      'step.completed': 'run.step_completed',
      'run.awaiting_approval': 'run.awaiting_approval',
      'run.failed': 'run.failed',
      'run.approved': 'run.completed',
      'run.approval_undone': 'run.awaiting_approval',
      'run.rejected': 'run.rejected',
      'run.cancelled': 'run.cancelled',
      'draft.sent': 'draft.sent',
      'draft.delivery_failed': 'draft.delivery_failed',
      'draft.replied': 'draft.replied',
    };
    const unheard: RunEventType[] = ['run.queued', 'step.started', 'step.retrying', 'step.failed', 'run.regenerating', 'draft.edited',
      'draft.delivery_queued', 'draft.delivery_retrying', 'draft.saved_to_mailbox'];
    for (const [event, webhook] of Object.entries(heard)) assert.equal(webhookOf(event as RunEventType), webhook, event);
    for (const event of unheard) assert.equal(webhookOf(event), null, event);
    // run.queued is heard as run.started, with the run as it was accepted (start.ts), not through its event.
    assert.equal(RUN.queue.webhook, 'run.started');
  });
});

for (const kind of BACKENDS) {
  describe(`applyTransition (${kind})`, () => {
    let testDb: TestDatabase;
    const workspaceId = randomUUID();
    const runId = randomUUID();
    before(async () => {
      testDb = await createTestDatabase(kind);
      const leadId = randomUUID();
      const callId = randomUUID();
      const seed = [
        `INSERT INTO workspaces (id, name, plan, created_at) VALUES ('${workspaceId}', 'Lifecycle', 'PRO', now())`,
        `INSERT INTO leads (id, workspace_id, name, status, created_at, updated_at) VALUES ('${leadId}', '${workspaceId}', 'Ada', 'DISCOVERY', now(), now())`,
        `INSERT INTO calls (id, workspace_id, lead_id, transcript, created_at) VALUES ('${callId}', '${workspaceId}', '${leadId}', 'Hello.', now())`,
        `INSERT INTO runs (id, workspace_id, lead_id, call_id, status, trace_id, available_at, started_at, updated_at)
         VALUES ('${runId}', '${workspaceId}', '${leadId}', '${callId}', 'QUEUED', 'trace', now(), now(), now())`,
        `INSERT INTO run_steps (run_id, position, node, status, attempts) VALUES ('${runId}', 0, 'RESEARCH', 'PENDING', 0)`,
      ];
      for (const statement of seed) await sql.raw(statement).execute(testDb.database.db);
    });
    after(() => testDb.drop());

    const events = async () => (await testDb.database.db.selectFrom('run_events').select('type').where('run_id', '=', runId).orderBy('seq').execute())
      .map((e) => e.type);
    const status = async () => (await testDb.database.db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirstOrThrow()).status;

    it('changes nothing, and records nothing, from a state the transition does not leave from', async () => {
      const db = testDb.database.db;
      assert.equal(await db.transaction().execute((trx) => applyTransition(trx, RUN.approve, { workspaceId, runId, at: new Date() })), 0);
      assert.equal(await status(), 'QUEUED');
      assert.deepEqual(await events(), []);
    });

    it('changes nothing in another workspace, whatever the run id', async () => {
      const db = testDb.database.db;
      const changed = await db.transaction().execute((trx) => applyTransition(trx, RUN.cancel, { workspaceId: randomUUID(), runId, at: new Date() }));
      assert.equal(changed, 0);
      assert.equal(await status(), 'QUEUED');
    });

    it('writes the row and its event together from a state it leaves from', async () => {
      const db = testDb.database.db;
      const at = new Date();
      await db.transaction().execute(async (trx) => {
        await applyTransition(trx, STEP.skip, { workspaceId, runId, at });
        await applyTransition(trx, RUN.cancel, { workspaceId, runId, at, set: { completed_at: at } });
      });
      assert.equal(await status(), 'CANCELLED');
      assert.deepEqual(await events(), ['run.cancelled'], 'a skip records no event; a cancellation does');
      const step = await db.selectFrom('run_steps').select('status').where('run_id', '=', runId).executeTakeFirstOrThrow();
      assert.equal(step.status, 'SKIPPED');
    });
  });
}
