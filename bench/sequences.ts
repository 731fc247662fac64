// The follow-up scheduler at scale (issue 42, DESIGN §13): a tick's database work with 1,000 and with 100,000 active
// enrolments on PostgreSQL, the due work the same (50 touches due). The scheduler finds its work by two indexes on
// time (touches_ready, enrolments_paused_until), so what a tick reads should not grow with what is enrolled.
//
//   npm run bench -- --only sequences                      (a workload of bench/run.ts; --sequence-enrolments N
//                                                           for the larger size, --variant ../copy for an A/B)
//   node bench/sequences.ts                                this copy alone
//
// Each enrolment has three touches: touch 1 SENT, touch 2 SCHEDULED and due within the next 30 days (so in the
// scheduler's index, ready later), touch 3 SCHEDULED and not yet due (out of the index). A tenth of the enrolments
// are paused, half of those with an end. The enrolments' and touches' foreign keys to leads, runs and drafts are
// dropped in the bench's own database: the rows they point at play no part in finding the work, and 100,000 runs
// with their calls and leads would only slow the seeding. Each copy measured (this one, each --variant) migrates its
// own database and finds the work with its own scheduler functions, so an A/B sees a new index as well as a new query.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../src/db/schema.ts';
import { ROOT } from './processes.ts';
import { createBenchDatabase } from './seed.ts';

type Scheduler = Pick<typeof import('../src/domain/sequences/touches.ts'), 'claimReadyTouches' | 'endedPauses'>;
type OpenDatabase = typeof import('../src/db/database.ts')['openDatabase'];

const DUE = 50;
const NOW = new Date('2026-03-02T08:00:00Z');

async function seed(db: Kysely<DB>, enrolments: number): Promise<void> {
  for (const table of ['enrolments', 'touches']) {
    const { rows } = await sql<{ conname: string }>`SELECT conname FROM pg_constraint WHERE conrelid = ${table}::regclass AND contype = 'f'`.execute(db);
    for (const { conname } of rows) await sql.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${conname}`).execute(db);
  }
  await sql`INSERT INTO workspaces (id, name, plan, created_at) VALUES ('00000000-0000-4000-8000-000000000001', 'Bench', 'PRO', now())`.execute(db);
  await sql`
    INSERT INTO enrolments (id, workspace_id, lead_id, run_id, sequence_id, sequence_name, steps, method, sender_user_id, status, pause_reason,
                            paused_until, next_touch_at, created_at, updated_at)
    SELECT gen_random_uuid(), '00000000-0000-4000-8000-000000000001', gen_random_uuid(), gen_random_uuid(), NULL, 'Two follow-ups',
           '[{"waitDays":3,"instruction":"a","review":"auto"},{"waitDays":5,"instruction":"b","review":"auto"}]', 'send', NULL,
           CASE WHEN i % 10 = 0 THEN 'PAUSED' ELSE 'ACTIVE' END, CASE WHEN i % 10 = 0 THEN 'manual' END,
           CASE WHEN i % 20 = 0 THEN ${NOW}::timestamptz + (i % 30) * interval '1 day' + interval '1 hour' END,
           ${NOW}::timestamptz + (i % 30) * interval '1 day' + interval '1 day', now(), now()
    FROM generate_series(1, ${enrolments}) i`.execute(db);
  await sql`
    INSERT INTO touches (id, workspace_id, enrolment_id, run_id, number, status, review, due_at, ready_at, created_at, updated_at)
    SELECT gen_random_uuid(), n.workspace_id, n.id, n.run_id, k.number,
           CASE WHEN k.number = 1 THEN 'SENT' ELSE 'SCHEDULED' END, 'auto',
           CASE WHEN k.number = 2 THEN n.next_touch_at END,
           CASE WHEN k.number = 2 AND n.status = 'ACTIVE' THEN n.next_touch_at - interval '1 day' + interval '1 minute' END,
           now(), now()
    FROM enrolments n CROSS JOIN (VALUES (1), (2), (3)) k(number)`.execute(db);
  // The due work, the same at every size: DUE touches ready before now.
  await sql`
    UPDATE touches SET ready_at = ${NOW}::timestamptz - interval '1 minute'
    WHERE id IN (SELECT id FROM touches WHERE number = 2 AND ready_at IS NOT NULL ORDER BY id LIMIT ${DUE})`.execute(db);
  await sql`ANALYZE enrolments`.execute(db);
  await sql`ANALYZE touches`.execute(db);
}

/** One copy at one size: what finding a tick's work reads (buffers) and takes (ms, the median of 5 ticks). */
export interface SequenceFigures { copy: string; enrolments: number; buffers: number; updateBuffers: number; ms: number; claimed: number }

export interface SequencesOptions {
  /** The two sizes compared (active enrolments); the due work is the same at both. */
  sizes: [number, number];
  /** The copies of leadrun measured, by name: this one (`leadrun`, at ROOT) and the variants. */
  copies: Array<{ name: string; root: string }>;
}

/** What finding a tick's work reads: the two statements' buffers (EXPLAIN ANALYZE BUFFERS), then the real claim's time. */
async function tick(db: Kysely<DB>, scheduler: Scheduler, enrolments: number): Promise<Omit<SequenceFigures, 'copy'>> {
  let buffers = 0;
  let updateBuffers = 0;
  const explain = async (statement: ReturnType<typeof sql>) => {
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`.execute(db);
    const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
    buffers += (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  };
  await explain(sql`SELECT id FROM touches WHERE ready_at <= ${NOW}::timestamptz ORDER BY ready_at LIMIT ${DUE} FOR UPDATE SKIP LOCKED`);
  await explain(sql`SELECT id FROM enrolments WHERE status = 'PAUSED' AND paused_until IS NOT NULL AND paused_until <= ${NOW}::timestamptz
    ORDER BY paused_until LIMIT ${DUE}`);
  // The claim itself (an UPDATE of the due touches), rolled back so that every run claims the same.
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
      UPDATE touches SET ready_at = ${NOW}::timestamptz + interval '5 minutes'
      WHERE id = ANY(ARRAY(SELECT id FROM touches WHERE ready_at <= ${NOW}::timestamptz ORDER BY ready_at LIMIT ${DUE} FOR UPDATE SKIP LOCKED))`.execute(trx);
    const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
    updateBuffers = (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
    throw new Error('rollback');
  }).catch(() => {});
  const started = performance.now();
  const paused = await scheduler.endedPauses(db, NOW);
  const claimed = await db.transaction().execute(async (trx) => {
    const rows = await scheduler.claimReadyTouches(trx, NOW);
    // Rolled back: every size is measured on the same due work.
    await sql`SELECT 1`.execute(trx);
    throw Object.assign(new Error('rollback'), { rows });
  }).catch((error: { rows?: unknown[] }) => error.rows?.length ?? 0);
  return { enrolments, buffers, updateBuffers, ms: performance.now() - started, claimed: claimed + paused.length };
}

/** Imports a module of a copy of leadrun (this one, or a --variant's checkout). */
const importFrom = <T>(root: string, file: string): Promise<T> => import(pathToFileURL(path.join(root, file)).href) as Promise<T>;

async function measure(copy: { name: string; root: string }, enrolments: number): Promise<SequenceFigures> {
  const { openDatabase } = await importFrom<{ openDatabase: OpenDatabase }>(copy.root, 'src/db/database.ts');
  const scheduler = await importFrom<Scheduler>(copy.root, 'src/domain/sequences/touches.ts');
  const target = await createBenchDatabase();
  const database = await openDatabase({ databaseUrl: target.url });
  try {
    await database.migrate();
    await seed(database.db, enrolments);
    await tick(database.db, scheduler, enrolments); // warm the cache and the plans
    const runs = [];
    for (let i = 0; i < 5; i += 1) runs.push(await tick(database.db, scheduler, enrolments));
    runs.sort((a, b) => a.ms - b.ms);
    return { copy: copy.name, ...runs[2]! };
  } finally {
    await database.close();
    await target.drop();
  }
}

/** Every copy at both sizes, one copy after the other. */
export async function sequencesWorkload(options: SequencesOptions, log: (line: string) => void): Promise<SequenceFigures[]> {
  const figures: SequenceFigures[] = [];
  for (const copy of options.copies) {
    for (const size of options.sizes) {
      log(`follow-up scheduler (${copy.name}): a tick with ${size} active enrolments`);
      figures.push(await measure(copy, size));
    }
  }
  return figures;
}

export function formatSequences(figures: SequenceFigures[]): string[] {
  const f = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const lines = [
    `| follow-up scheduler tick, ${DUE} touches due | active enrolments | look-up buffers | claim buffers | ms (median of 5) | due claimed |`,
    '|---|--:|--:|--:|--:|--:|',
    ...figures.map((r) => `| ${r.copy} | ${f(r.enrolments)} | ${f(r.buffers)} | ${f(r.updateBuffers)} | ${f(r.ms, 2)} | ${f(r.claimed)} |`),
  ];
  for (const copy of new Set(figures.map((r) => r.copy))) {
    const [small, large] = figures.filter((r) => r.copy === copy);
    if (!small || !large) continue;
    lines.push(`${copy}, ${f(large.enrolments)} / ${f(small.enrolments)} enrolments: look-up buffers ${f(large.buffers / small.buffers, 2)}×, `
      + `claim buffers ${f(large.updateBuffers / small.updateBuffers, 2)}×, time ${f(large.ms / small.ms, 2)}×`);
  }
  return lines;
}

if (import.meta.main) {
  const figures = await sequencesWorkload({ sizes: [1_000, 100_000], copies: [{ name: 'leadrun', root: ROOT }] }, (line) => process.stderr.write(`${line}\n`));
  console.log(formatSequences(figures).join('\n'));
}
