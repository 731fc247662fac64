// One shape for a lead: the API's Lead schema (src/schemas/leads.ts), the Lead that toLead() builds for single reads,
// and the JSON PostgreSQL stores with each row for pages of leads (leads.api_json, written by the leadrun_lead_json
// function of migrations 0005/0013) hold the same fields in the same order with the same values. A field added to one
// of the three and not to the others fails here, before a client sees two shapes of one lead.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { toLead } from '../../src/domain/leads/leads.ts';
import { bodyValidator } from '../../src/domain/validators.ts';
import { createWorkspace } from '../../src/domain/workspaces/workspaces.ts';
import { Lead } from '../../src/schemas/leads.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers.ts';

// Every field a lead always has; `doNotContact` (optional) comes from the suppression list, not from the lead's row.
const FIELDS = Object.keys(Lead.properties).filter((field) => (Lead.required as readonly string[] | undefined ?? []).includes(field));
const validLead = bodyValidator().compile(Lead);

for (const kind of BACKENDS) {
  describe(`a lead's one shape (${kind})`, () => {
    let t: TestDatabase;
    before(async () => { t = await createTestDatabase(kind); });
    after(async () => { await t.drop(); });

    it('is the same in the schema, in toLead() and in the stored JSON, every field set or none', async () => {
      const clock = new ManualClock(new Date('2026-03-01T09:30:00.123Z'));
      const workspace = await createWorkspace(t.database.db, { name: 'Shapes', adminEmail: `${randomUUID()}@shapes.test` }, clock);
      const at = (iso: string) => new Date(iso);
      const full = {
        id: randomUUID(), workspace_id: workspace.id, name: 'Ada "Quotes" Lovelace\n', email: 'ada@example.com',
        company_name: 'Analytical Engines\u00e9', company_website: 'https://engines.example/', status: 'QUALIFIED' as const,
        assigned_to_user_id: workspace.adminUserId, created_at: at('2026-03-01T09:30:00.123Z'), updated_at: at('2026-03-02T10:00:00.456Z'),
        last_contacted_at: at('2026-03-03T11:00:00.789Z'), last_reply_at: at('2026-03-04T12:00:00.000Z'),
        next_action_at: at('2026-07-01T00:00:00.000Z'),
      };
      const bare = {
        ...full, id: randomUUID(), name: 'Grace', email: null, company_name: null, company_website: null, status: 'DISCOVERY' as const,
        assigned_to_user_id: null, last_contacted_at: null, last_reply_at: null, next_action_at: null,
      };
      await t.database.db.insertInto('leads').values([full, bare]).execute();
      const rows = await t.database.db.selectFrom('leads').selectAll().where('workspace_id', '=', workspace.id).orderBy('name').execute();
      assert.equal(rows.length, 2);
      for (const { api_json: stored, search_text: _search, ...row } of rows) {
        const fromSql = JSON.parse(stored) as Record<string, unknown>;
        const fromTs = JSON.parse(JSON.stringify(toLead(row))) as Record<string, unknown>;
        assert.deepEqual(Object.keys(fromSql), FIELDS, 'leadrun_lead_json writes the schema\'s fields, in its order');
        assert.deepEqual(Object.keys(fromTs), FIELDS, 'toLead() builds the schema\'s fields, in its order');
        assert.deepEqual(fromSql, fromTs, 'the stored JSON and toLead() say the same of one row');
        assert.ok(validLead(fromSql), `the stored JSON fits the Lead schema: ${JSON.stringify(validLead.errors)}`);
      }
    });
  });
}
