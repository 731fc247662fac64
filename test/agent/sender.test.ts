// Who signs a draft, found by the worker: the person who started the run, else the workspace's admin (a run
// started through the API has no person), else the workspace's configured sender name; with a signature, the draft
// ends with it verbatim. And a regeneration knows the draft it replaces: without feedback it is another version.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createProspect, runReaches, startRunViaApi } from '../worker/support.ts';
import { wordCount } from '../../src/agent/engines/offline.ts';

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

for (const kind of BACKENDS) {
  describe(`${kind}: the sender of a draft`, () => {
    let t: TestApp;

    before(async () => {
      t = await startTestApp(kind);
    });
    after(() => t?.close());

    /** A workspace, a key and a prospect; the admin named as given. */
    async function workspace(admin: { name: string | null; senderName?: string | null; signature?: string | null }) {
      const ws = await t.workspace('pro');
      const { key } = await t.key(ws.id);
      await t.database.db.updateTable('users')
        .set({ name: admin.name, sender_name: admin.senderName ?? null, signature: admin.signature ?? null })
        .where('id', '=', ws.adminUserId).execute();
      return { ...ws, key, prospect: await createProspect(t, key) };
    }

    async function draftOf(key: string, runId: string): Promise<{ body: string; version: number; id: string }> {
      const run = await waitForRun(t, key, runId, atRest);
      assert.equal(run.status, 'AWAITING_APPROVAL', JSON.stringify(run));
      const draft = await t.database.db.selectFrom('email_drafts').select(['id', 'body', 'version']).where('run_id', '=', runId)
        .orderBy('version', 'desc').executeTakeFirstOrThrow();
      return draft;
    }

    it('signs a run started through the API with the workspace admin, by their sender name, and with their signature', async () => {
      const plain = await workspace({ name: 'Grace Hopper' });
      const signed = await workspace({ name: 'Jonas Berg', senderName: 'Jonas B.', signature: 'Jonas Berg\nAccount Executive, Analytical Engines Ltd\n+44 20 7946 0000' });
      const senderNamed = await workspace({ name: 'Katherine Johnson', senderName: 'Kate Johnson' });
      const runs = [
        await startRunViaApi(t, plain.key, plain.prospect),
        await startRunViaApi(t, signed.key, signed.prospect),
        await startRunViaApi(t, senderNamed.key, senderNamed.prospect),
      ];
      const worker = await t.startWorker();
      try {
        const [a, b, c] = [await draftOf(plain.key, runs[0]!), await draftOf(signed.key, runs[1]!), await draftOf(senderNamed.key, runs[2]!)];
        assert.ok(a.body.endsWith('\n\nBest regards,\nGrace Hopper'), a.body);
        // The signature opens with the sender's first name: the name is not written again above its separator.
        assert.ok(b.body.endsWith('\n\nBest regards,\n-- \nJonas Berg\nAccount Executive, Analytical Engines Ltd\n+44 20 7946 0000'), b.body);
        assert.ok(c.body.endsWith('\n\nBest regards,\nKate Johnson'), c.body);
        // The signature is the sender's to state: the grounding check does not flag it.
        const writer = await t.database.db.selectFrom('run_steps').select('output').where('run_id', '=', runs[1]!).where('node', '=', 'WRITER').executeTakeFirstOrThrow();
        assert.equal((writer.output as any).grounding.grounded, true, JSON.stringify((writer.output as any).grounding));
      } finally {
        await worker.stop();
      }
    });

    it('signs a run started by a person with that person, not the admin', async () => {
      const ws = await workspace({ name: 'Grace Hopper', signature: 'Grace Hopper, Head of Sales' });
      const memberId = randomUUID();
      await t.database.db.insertInto('users').values({
        id: memberId, workspace_id: ws.id, email: `member-${memberId.slice(0, 8)}@example.com`, name: 'Ada Byron', role: 'MEMBER',
        password_hash: null, created_at: new Date(), signature: 'Ada Byron\nSales, Analytical Engines Ltd',
      }).execute();
      const runId = await startRunViaApi(t, ws.key, ws.prospect);
      // As the UI records it: the run is the member's.
      await t.database.db.updateTable('runs').set({ created_by_user_id: memberId }).where('id', '=', runId).execute();
      const worker = await t.startWorker();
      try {
        const draft = await draftOf(ws.key, runId);
        assert.ok(draft.body.endsWith('\n\nBest regards,\n-- \nAda Byron\nSales, Analytical Engines Ltd'), draft.body);
      } finally {
        await worker.stop();
      }
    });

    it('signs with the workspace’s sender name when no person is found, and with a closing alone when nothing is', async () => {
      const named = await workspace({ name: null });
      await t.database.db.insertInto('mail_settings').values({ workspace_id: named.id, from_name: 'The Analytical Engines team', updated_at: new Date() } as any).execute();
      const bare = await workspace({ name: null });
      const runs = [await startRunViaApi(t, named.key, named.prospect), await startRunViaApi(t, bare.key, bare.prospect)];
      const worker = await t.startWorker();
      try {
        assert.ok((await draftOf(named.key, runs[0]!)).body.endsWith('\n\nBest regards,\nThe Analytical Engines team'));
        assert.ok((await draftOf(bare.key, runs[1]!)).body.endsWith('\n\nBest regards,'));
      } finally {
        await worker.stop();
      }
    });

    it('regenerates another version without feedback, and follows a word limit with it', async () => {
      const ws = await workspace({ name: 'Grace Hopper' });
      const runId = await startRunViaApi(t, ws.key, ws.prospect);
      const worker = await t.startWorker();
      try {
        const bodies = [(await draftOf(ws.key, runId)).body];
        for (let version = 2; version <= 4; version++) {
          const res = await t.api('POST', `/api/v1/runs/${runId}/reject`, { key: ws.key, body: { regenerate: true } });
          assert.equal(res.status, 200, res.text);
          await runReaches(t.database.db, runId, 'AWAITING_APPROVAL');
          const draft = await draftOf(ws.key, runId);
          assert.equal(draft.version, version);
          assert.notEqual(draft.body, bodies.at(-1), `version ${version} differs from the one it replaces`);
          assert.ok(draft.body.endsWith('Best regards,\nGrace Hopper'));
          bodies.push(draft.body);
        }
        const res = await t.api('POST', `/api/v1/runs/${runId}/reject`, { key: ws.key, body: { feedback: 'Keep it under 60 words.', regenerate: true } });
        assert.equal(res.status, 200, res.text);
        await runReaches(t.database.db, runId, 'AWAITING_APPROVAL');
        const short = await draftOf(ws.key, runId);
        assert.equal(short.version, 5);
        assert.ok(wordCount(short.body) < 60, `${wordCount(short.body)} words:\n${short.body}`);
        assert.ok(short.body.endsWith('Best regards,\nGrace Hopper'));
      } finally {
        await worker.stop();
      }
    });
  });
}
