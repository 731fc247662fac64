// The Outcomes query (DESIGN §16, src/domain/analytics/outreach.ts) at 100,000 e-mails sent in one workspace over
// 12 weeks, on PostgreSQL and on embedded PGlite, against a baseline: the least any answer must do, one indexed
// count of the workspace's e-mails in the range. Prints the median of each over `--rounds` tries, per groupBy, and
// the ratio to the baseline. A measure, not a test: the figures depend on the machine. The query reads
// outreach_outcomes (migration 0057), which the seed fills through the table's triggers, as the product does.
//
//   node bench/analytics.ts                        100,000 e-mails, both backends
//   node bench/analytics.ts --emails 20000 --rounds 5 --backends postgres
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { ManualClock } from '../src/clock.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { GROUP_BYS, outreach } from '../src/domain/analytics/outreach.ts';
import { createWorkspace } from '../src/domain/workspaces/workspaces.ts';
import { seedOutreach } from './analytics-seed.ts';
import { createBenchDatabase } from './seed.ts';

const { values } = parseArgs({
  options: {
    emails: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '15' },
    backends: { type: 'string', default: 'postgres,pglite' },
  },
});
const EMAILS = Number(values.emails);
const ROUNDS = Number(values.rounds);
const START = new Date('2026-01-05T08:00:00Z');
const NOW = new Date('2026-03-29T12:00:00Z');

async function medianMs(work: () => Promise<unknown>): Promise<number> {
  await work();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function measure(kind: string, database: Database): Promise<void> {
  const db: Kysely<DB> = database.db;
  await database.migrate();
  const clock = new ManualClock(START);
  const workspace = await createWorkspace(db, { name: 'Outcomes bench', adminEmail: `${randomUUID()}@bench.example` }, clock);
  // Another workspace of the same size shares the tables: the query must find its own rows among others'.
  const other = await createWorkspace(db, { name: 'Another', adminEmail: `${randomUUID()}@bench.example` }, clock);
  const seeding = performance.now();
  await seedOutreach(db, { workspaceId: workspace.id, emails: EMAILS, start: START, weeks: 12 });
  await seedOutreach(db, { workspaceId: other.id, emails: EMAILS, start: START, weeks: 12 });
  await sql`ANALYZE`.execute(db);
  console.log(`${kind}: seeded 2 × ${EMAILS.toLocaleString('en')} e-mails in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

  const baseline = await medianMs(() => sql`SELECT count(*) FROM email_deliveries
    WHERE workspace_id = ${workspace.id} AND delivered_at >= '2025-12-29' AND delivered_at < '2026-03-30'`.execute(db));
  console.log(`  baseline (count the range)      ${baseline.toFixed(1).padStart(7)} ms`);
  for (const groupBy of GROUP_BYS) {
    const ms = await medianMs(() => outreach(db, workspace.id, { groupBy, timeZone: 'UTC' }, NOW));
    const sent = (await outreach(db, workspace.id, { groupBy, timeZone: 'UTC' }, NOW)).data.reduce((s, r) => s + r.sent, 0);
    console.log(`  groupBy=${groupBy.padEnd(13)} ${sent} sent  ${ms.toFixed(1).padStart(7)} ms  ×${(ms / baseline).toFixed(1)} the baseline`);
  }
}

for (const kind of values.backends.split(',')) {
  if (kind === 'postgres') {
    const target = await createBenchDatabase();
    const database = await openDatabase({ databaseUrl: target.url });
    try { await measure(kind, database); } finally { await database.close(); await target.drop(); }
  } else {
    const database = await openDatabase({ databaseUrl: null, inMemory: true });
    try { await measure(kind, database); } finally { await database.close(); }
  }
}
