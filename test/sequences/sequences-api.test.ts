// Sequences (DESIGN §13) through the API, on both backends: every workspace has "Two follow-ups" as its default;
// sequences are made, read, changed and deleted with their scopes; bad input is a problem naming the field; another
// workspace's sequence is not found; the default moves, and cannot be deleted while others exist.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertProblem } from '../http/support.ts';

const step = (waitDays: number, review: 'required' | 'auto' = 'required') => ({ waitDays, instruction: `Follow up after ${waitDays} days.`, review });

for (const kind of BACKENDS) {
  describe(`sequences API (${kind})`, () => {
    let t: TestApp;
    before(async () => { t = await startTestApp(kind); });
    after(async () => { await t?.close(); });

    it('gives a new workspace "Two follow-ups" (+3, +5 business days, review required) as its default', async () => {
      const ws = await t.workspace();
      const { key } = await t.key(ws.id);
      const res = await t.api('GET', '/api/v1/sequences', { key });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.data.length, 1);
      const [sequence] = res.json.data;
      assert.equal(sequence.name, 'Two follow-ups');
      assert.equal(sequence.isDefault, true);
      assert.deepEqual(sequence.steps.map((s: any) => [s.waitDays, s.review]), [[3, 'required'], [5, 'required']]);
    });

    it('makes, reads, changes and deletes a sequence; the default moves to the one made default', async () => {
      const ws = await t.workspace();
      const { key } = await t.key(ws.id);
      const made = await t.api('POST', '/api/v1/sequences', { key, body: { name: ' Fast ', steps: [step(1, 'auto'), step(2)], isDefault: true } });
      assert.equal(made.status, 201, made.text);
      const id = made.json.data.id;
      assert.equal(made.headers.get('location'), `/api/v1/sequences/${id}`);
      assert.equal(made.json.data.name, 'Fast');
      assert.equal(made.json.data.isDefault, true);
      const list = (await t.api('GET', '/api/v1/sequences', { key })).json.data;
      assert.deepEqual(list.map((s: any) => [s.name, s.isDefault]), [['Two follow-ups', false], ['Fast', true]]);

      const changed = await t.api('PATCH', `/api/v1/sequences/${id}`, { key, body: { steps: [step(30)] } });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual(changed.json.data.steps, [step(30)]);
      assert.equal((await t.api('GET', `/api/v1/sequences/${id}`, { key })).json.data.steps.length, 1);

      // The default cannot go while another sequence exists: another is made the default first.
      assertProblem(await t.api('DELETE', `/api/v1/sequences/${id}`, { key }), 409, 'invalid_state');
      const other = list.find((s: any) => s.name === 'Two follow-ups');
      assert.equal((await t.api('PATCH', `/api/v1/sequences/${other.id}`, { key, body: { isDefault: true } })).status, 200);
      assert.equal((await t.api('DELETE', `/api/v1/sequences/${id}`, { key })).status, 204);
      assertProblem(await t.api('GET', `/api/v1/sequences/${id}`, { key }), 404, 'not_found');
      const audit = await t.database.db.selectFrom('audit_log').select('action').where('workspace_id', '=', ws.id)
        .where('action', 'like', 'sequence.%').orderBy('occurred_at').execute();
      assert.deepEqual(audit.map((a) => a.action), ['sequence.created', 'sequence.updated', 'sequence.deleted', 'sequence.updated', 'sequence.deleted']);
    });

    it('refuses bad steps with a problem naming the field', async () => {
      const ws = await t.workspace();
      const { key } = await t.key(ws.id);
      const cases: Array<[unknown, string]> = [
        [{ name: 'x', steps: [] }, 'steps'],
        [{ name: 'x', steps: Array.from({ length: 11 }, () => step(1)) }, 'steps'],
        [{ name: 'x', steps: [step(0)] }, 'steps[0].waitDays'],
        [{ name: 'x', steps: [step(31)] }, 'steps[0].waitDays'],
        [{ name: 'x', steps: [{ ...step(1), instruction: 'a'.repeat(501) }] }, 'steps[0].instruction'],
        [{ name: 'x', steps: [{ ...step(1), review: 'sometimes' }] }, 'steps[0].review'],
        [{ name: '', steps: [step(1)] }, 'name'],
        [{ name: 'x', steps: [step(1)], colour: 'red' }, 'colour'],
      ];
      for (const [body, field] of cases) {
        const res = await t.api('POST', '/api/v1/sequences', { key, body });
        assertProblem(res, 400, 'invalid_request');
        assert.ok(res.json.errors.some((e: any) => e.field === field || e.field.startsWith(field)), `${field}: ${res.text}`);
      }
      assertProblem(await t.api('PATCH', '/api/v1/sequences/not-a-uuid', { key, body: { name: 'y' } }), 404, 'not_found');
    });

    it('keeps each workspace to its own sequences, and asks for the sequences scopes', async () => {
      const a = await t.workspace();
      const b = await t.workspace();
      const keyA = (await t.key(a.id)).key;
      const keyB = (await t.key(b.id)).key;
      const made = (await t.api('POST', '/api/v1/sequences', { key: keyA, body: { name: 'Mine', steps: [step(2)] } })).json.data;
      assertProblem(await t.api('GET', `/api/v1/sequences/${made.id}`, { key: keyB }), 404, 'not_found');
      assertProblem(await t.api('PATCH', `/api/v1/sequences/${made.id}`, { key: keyB, body: { name: 'Theirs' } }), 404, 'not_found');
      assertProblem(await t.api('DELETE', `/api/v1/sequences/${made.id}`, { key: keyB }), 404, 'not_found');
      assert.ok(!(await t.api('GET', '/api/v1/sequences', { key: keyB })).json.data.some((s: any) => s.id === made.id));

      const reader = (await t.key(a.id, ['sequences:read'])).key;
      assert.equal((await t.api('GET', '/api/v1/sequences', { key: reader })).status, 200);
      assertProblem(await t.api('POST', '/api/v1/sequences', { key: reader, body: { name: 'No', steps: [step(1)] } }), 403, 'insufficient_scope');
      const runsOnly = (await t.key(a.id, ['runs:read', 'runs:write'])).key;
      assertProblem(await t.api('GET', '/api/v1/sequences', { key: runsOnly }), 403, 'insufficient_scope');
    });
  });
}
