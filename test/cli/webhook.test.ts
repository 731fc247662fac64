// `leadrun webhook create --workspace ID|NAME --url URL --events a,b --json` (DESIGN §9): the real program against
// PostgreSQL prints {"id","secret"}; the secret is stored sealed under SECRETS_KEY and signs what is sent; bad input
// is one clear line and makes nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { SecretBox } from '../../src/domain/secret-box.ts';
import { secretContext } from '../../src/domain/webhooks/signing.ts';
import { createMigratedPostgresDatabase } from '../helpers.ts';
import { assertCleanFailure, leadrunJson, runLeadrun } from './support.ts';

describe('leadrun webhook create on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> };
  let client: pg.Client;
  let env: Record<string, string>;
  let workspaceId: string;
  const key = randomBytes(32);

  before(async () => {
    database = await createMigratedPostgresDatabase();
    env = { DATABASE_URL: database.url, SECRETS_KEY: key.toString('base64'), ALLOW_PRIVATE_HOSTS: 'true' };
    workspaceId = (await leadrunJson(['workspace', 'create', '--name', 'Hooks', '--json'], env)).id;
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await database?.drop();
  });

  it('--json prints exactly the id and the secret, stored sealed, with the events asked for and an audit entry', async () => {
    const result = await leadrunJson(['webhook', 'create', '--workspace', 'Hooks', '--url', 'http://127.0.0.1:9/hook', '--events', 'run.completed, draft.sent', '--json'], env);
    assert.deepEqual(Object.keys(result).sort(), ['id', 'secret']);
    assert.match(result.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const { rows: [row] } = await client.query('SELECT workspace_id, url, events, secret FROM webhook_endpoints WHERE id = $1', [result.id]);
    assert.equal(row.workspace_id, workspaceId);
    assert.deepEqual(row.events, ['run.completed', 'draft.sent']);
    assert.ok(!row.secret.includes(result.secret.slice(6)));
    assert.equal(new SecretBox(key).open(row.secret, secretContext(result.id, 'secret')), result.secret);
    const audit = await client.query("SELECT source FROM audit_log WHERE action = 'webhook.created' AND target_id = $1", [result.id]);
    assert.deepEqual(audit.rows, [{ source: 'cli' }]);
  });

  it('without --json says the secret is shown once', async () => {
    const res = await runLeadrun(['webhook', 'create', '--workspace', workspaceId, '--url', 'https://93.184.215.14/hook'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^Created webhook endpoint [0-9a-f-]{36}\. Its signing secret:\n\n {2}whsec_\S+\n\nThis is the only time/);
  });

  it('refuses an unknown event type, a private address without ALLOW_PRIVATE_HOSTS and a missing --url, making nothing', async () => {
    const before = Number((await client.query('SELECT count(*) FROM webhook_endpoints')).rows[0].count);
    assertCleanFailure(await runLeadrun(['webhook', 'create', '--workspace', workspaceId, '--url', 'https://93.184.215.14/', '--events', 'lead.exploded'], env),
      /Unknown event type lead\.exploded/);
    assertCleanFailure(await runLeadrun(['webhook', 'create', '--workspace', workspaceId, '--url', 'http://127.0.0.1/hook'], { ...env, ALLOW_PRIVATE_HOSTS: 'false' }),
      /url.*127\.0\.0\.1.*loopback/);
    assertCleanFailure(await runLeadrun(['webhook', 'create', '--workspace', workspaceId], env), /--url is required/);
    assert.equal(Number((await client.query('SELECT count(*) FROM webhook_endpoints')).rows[0].count), before);
  });
});
