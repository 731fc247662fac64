// The import workload of `npm run bench`: POST /api/v1/leads/import of generated rows to a real `leadrun serve`, on
// PostgreSQL and on embedded PGlite, while /healthz is probed every 50 ms; then, as the baseline, the same rows
// written into the same table by one bare INSERT … SELECT FROM unnest(…) (no HTTP, no parsing, no validation).
import { sql, type Kysely } from 'kysely';
import type { DB } from '../src/db/schema.ts';
import { startServe } from './processes.ts';

export interface ImportFigures {
  backend: 'postgres' | 'pglite';
  /** `create` (every row a new lead) or `dedupe` (the same file again with dedupe=email: every row updates one). */
  kind: 'create' | 'dedupe';
  rows: number;
  bytes: number;
  /** From sending the file to the answer. */
  seconds: number;
  created: number;
  updated: number;
  probes: number;
  slowestProbeMs: number;
  /** The bare INSERT of the same rows (for `create` only). */
  baselineSeconds: number | null;
}

interface Row {
  name: string;
  email: string;
  company: string;
  website: string;
  status: string;
}

export function importRows(count: number): Row[] {
  const statuses = ['Discovery', 'contacted', 'QUALIFIED', 'Proposal', 'won', 'lost'];
  return Array.from({ length: count }, (_, i) => ({
    name: `Imported Person ${i}`,
    email: `imported${i}@prospect${i % 97}.example`,
    company: `Company ${i % 1000}, Ltd`,
    website: `https://company${i % 1000}.example/about`,
    status: statuses[i % statuses.length]!,
  }));
}

/** The rows as a spreadsheet would export them: semicolons, quotes where a cell holds one, CRLF. */
export function importCsv(rows: Row[]): string {
  const cell = (value: string) => (/[;"\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const lines = rows.map((r) => [r.name, r.email, r.company, r.website, r.status].map(cell).join(';'));
  return ['Full Name;E-mail;Company;Website;Status', ...lines].join('\r\n');
}

/** POSTs the file while probing /healthz every 50 ms. */
async function timedImport(url: string, key: string, csv: Buffer, query: string): Promise<{ seconds: number; created: number; updated: number; probes: number; slowestProbeMs: number }> {
  let importing = true;
  const began = performance.now();
  const answer = fetch(`${url}/api/v1/leads/import${query}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv; charset=utf-8' }, body: csv,
  }).then(async (res) => {
    const body = await res.json() as { created: number; updated: number; skipped: number };
    if (res.status !== 200 || body.skipped !== 0) throw new Error(`the import answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return { body, seconds: (performance.now() - began) / 1000 };
  }).finally(() => { importing = false; });
  let probes = 0;
  let slowest = 0;
  while (importing) {
    // Every probe sent during the import counts, the one still waiting when the import answers included.
    const probe = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status} during the import`);
    probes += 1;
    slowest = Math.max(slowest, performance.now() - probe);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { body, seconds } = await answer;
  return { seconds, created: body.created, updated: body.updated, probes, slowestProbeMs: slowest };
}

/** The baseline: the same rows into the same table of another workspace, one INSERT in one transaction. */
async function bareInsert(db: Kysely<DB>, workspaceId: string, rows: Row[]): Promise<number> {
  const began = performance.now();
  const now = new Date();
  await db.transaction().execute(async (trx) => {
    await sql`
      INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at)
      SELECT gen_random_uuid(), ${workspaceId}::uuid, r.name, r.email, r.company, r.website, upper(r.status), NULL, ${now}::timestamptz, ${now}::timestamptz
      FROM unnest(${rows.map((r) => r.name)}::text[], ${rows.map((r) => r.email)}::text[], ${rows.map((r) => r.company)}::text[],
                  ${rows.map((r) => r.website)}::text[], ${rows.map((r) => r.status)}::text[]) AS r(name, email, company, website, status)`.execute(trx);
  });
  return (performance.now() - began) / 1000;
}

export interface ImportTarget {
  backend: 'postgres' | 'pglite';
  /** leadrun's environment for this backend (DATABASE_URL or DATA_DIR). */
  env: Record<string, string | undefined>;
  /** The workspace imported into, with its key, and another for the baseline. */
  workspace: { id: string; key: string };
  baselineWorkspaceId: string;
  /** Opens the database for the baseline (after serve has stopped: PGlite has one owner). */
  open(): Promise<{ db: Kysely<DB>; close(): Promise<void> }>;
}

export async function importWorkload(target: ImportTarget, count: number, log: (line: string) => void): Promise<ImportFigures[]> {
  const rows = importRows(count);
  const csv = Buffer.from(importCsv(rows));
  // The baseline first, into another workspace of the same table (on PGlite before serve opens the database).
  const database = await target.open();
  let baselineSeconds: number;
  try {
    baselineSeconds = await bareInsert(database.db, target.baselineWorkspaceId, rows);
    log(`  ${target.backend} baseline: one bare INSERT of the same ${count} rows: ${baselineSeconds.toFixed(2)} s`);
  } finally {
    await database.close();
  }
  const figures: ImportFigures[] = [];
  const serve = await startServe({ env: target.env, worker: false });
  try {
    // The pool starts its thread (and compiles the row validators) on the first import: not measured.
    const warmUp = await fetch(`${serve.url}/api/v1/leads/import?dryRun=true`, {
      method: 'POST', headers: { authorization: `Bearer ${target.workspace.key}`, 'content-type': 'text/csv' }, body: 'name\nWarm Up\n',
    });
    if (warmUp.status !== 200) throw new Error(`the warm-up import answered ${warmUp.status}: ${await warmUp.text()}`);
    for (const [kind, query] of [['create', ''], ['dedupe', '?dedupe=email']] as const) {
      const result = await timedImport(serve.url, target.workspace.key, csv, query);
      log(`  ${target.backend} import (${kind}) of ${count} rows, ${(csv.length / 1024 / 1024).toFixed(1)} MiB: ${result.seconds.toFixed(2)} s `
        + `(${result.created} created, ${result.updated} updated); slowest of ${result.probes} /healthz probes ${result.slowestProbeMs.toFixed(1)} ms`);
      figures.push({ backend: target.backend, kind, rows: count, bytes: csv.length, baselineSeconds: kind === 'create' ? baselineSeconds : null, ...result });
    }
  } finally {
    await serve.stop();
  }
  return figures;
}

export function formatImports(figures: ImportFigures[]): string[] {
  const lines = [
    '| lead import | rows | MiB | leadrun s | rows/s | slowest /healthz ms (probes) | bare INSERT s | leadrun vs bare INSERT |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const f of figures) {
    lines.push(`| ${f.kind === 'create' ? 'new leads' : 'same file, dedupe=email'} (${f.backend}) | ${f.rows} | ${(f.bytes / 1024 / 1024).toFixed(1)} | `
      + `${f.seconds.toFixed(2)} | ${Math.round(f.rows / f.seconds)} | ${f.slowestProbeMs.toFixed(1)} (${f.probes}) | `
      + `${f.baselineSeconds === null ? '' : f.baselineSeconds.toFixed(2)} | ${f.baselineSeconds === null ? '' : `${(f.seconds / f.baselineSeconds).toFixed(1)}×`} |`);
  }
  return lines;
}
