// Lead import (POST /api/v1/leads/import, `leadrun leads import`): a file of leads read in the CPU pool
// (src/domain/leads/import-file.ts), then written in one transaction, a statement for each IMPORT_WRITE_BATCH rows,
// never a statement per row. Every query is bounded by the workspace id.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import { CpuBudgetExceeded, type CpuPool } from '../../cpu/pool.ts';
import { planEachTime } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { AuditDetails } from '../audit/audit.ts';
import { AppError, invalid } from '../errors.ts';
import type {
  ImportColumn, ImportFileInput, ImportFileResult, ImportRowError, ImportWarning, ReadImport,
} from './import-file.ts';
import { parseColumnMap, parseStatusMap, type ColumnMap } from '../lead-import-format.ts';
import { LEAD_STATUSES } from '../../schemas/leads.ts';
import { emitLeadsCreated } from '../webhooks/events.ts';
import { stopClosedLeads } from '../sequences/stops.ts';

export interface ImportOptions {
  /** `email`: a row whose e-mail is a lead's already updates that lead. */
  dedupe: 'email' | null;
  /** Read and count, write nothing. */
  dryRun: boolean;
}

export interface ImportFile {
  format: 'csv' | 'json';
  bytes: Uint8Array;
  map: ColumnMap;
  /** The status each unknown status value is read as, keyed by the value in upper case. */
  statusMap: Record<string, string>;
}

/** The answer of an import. */
export interface LeadImportResult {
  created: number;
  updated: number;
  skipped: number;
  errors: ImportRowError[];
  errorCount: number;
  warnings: ImportWarning[];
  rows: number;
  dryRun: boolean;
  columns: ImportColumn[] | null;
}

/**
 * A file to import, with its `map` entries (`FIELD:COLUMN`, CSV only) read; entries that make no sense are a 400,
 * before the file is read.
 */
export function importFile(
  format: ImportFile['format'], bytes: Uint8Array, mapEntries: readonly string[],
  statusMapEntries: readonly string[] = [],
): ImportFile {
  const { map, problems } = parseColumnMap(mapEntries);
  if (problems.length > 0) throw new AppError('invalid_request', `The request is invalid: map ${problems[0]!.message}.`, { errors: problems });
  if (format === 'json' && mapEntries.length > 0) throw invalid('map', 'applies to CSV files only');
  const statuses = parseStatusMap(statusMapEntries, LEAD_STATUSES);
  if (statuses.problems.length > 0) {
    const message = `The request is invalid: statusMap ${statuses.problems[0]!.message}.`;
    throw new AppError('invalid_request', message, { errors: statuses.problems });
  }
  // A JSON import is checked as POST /api/v1/leads checks a lead, and its status is the API's, never another CRM's.
  if (format === 'json' && statusMapEntries.length > 0) throw invalid('statusMap', 'applies to CSV files only');
  return { format, bytes, map, statusMap: statuses.map };
}

/**
 * How a file is read: in the CPU pool, or (a command-line import, with no event loop to keep free) right here. A file's
 * bytes in memory of their own are handed to the pool's thread, not copied (10 MiB took the event loop about 35 ms to
 * copy): the caller's `bytes` are then empty.
 */
export type ImportReader = (input: ImportFileInput) => Promise<ImportFileResult>;

export function importReader(cpu: CpuPool | null): ImportReader {
  // Loaded here only when used: a server reads files in the pool's threads, and holds no CSV parser of its own.
  if (!cpu) return async (input) => (await import('./import-file.ts')).readImportFile(input);
  return async (input) => {
    try {
      const { bytes } = input;
      // A small body is a slice of memory shared with other buffers: it is copied, as it costs nothing to.
      const own = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      return await cpu.run('readLeadImport', input, { transfer: own ? [bytes.buffer as ArrayBuffer] : [] });
    } catch (error) {
      if (!(error instanceof CpuBudgetExceeded)) throw error;
      const budget = cpu.budgetMs >= 1000 ? `${Math.round(cpu.budgetMs / 100) / 10} s` : `${cpu.budgetMs} ms`;
      throw new AppError('payload_too_large', error.limit === 'time'
        ? `Reading the file took longer than the ${budget} an import may take, and was stopped; split it into smaller files.`
        : 'Reading the file needed more memory than an import may use, and was stopped; split it into smaller files.');
    }
  };
}

/**
 * Reads a file of leads for the workspace: parses it and validates every row (with the workspace's users, for
 * assignedToUserId). A file refused as a whole (not UTF-8, not CSV or JSON, over a limit) throws its AppError.
 */
export async function readLeadImport(db: Kysely<DB>, workspaceId: string, file: ImportFile, options: ImportOptions, read: ImportReader): Promise<ReadImport> {
  const users = await db.selectFrom('users').select('id').where('workspace_id', '=', workspaceId).execute();
  const result = await read({ ...file, dedupe: options.dedupe === 'email', userIds: users.map((u) => u.id) });
  if (!result.ok) throw new AppError(result.code, result.message, result.errors.length > 0 ? { errors: result.errors } : {});
  return result;
}

// Any fixed number: dedupe imports into one workspace take turns, so that two of them never both create a lead
// for an e-mail that neither found (the two-key form of the lock, a space apart from the migrations' one-key lock).
const DEDUPE_LOCK = 7_361_209;

/**
 * Writes the valid rows of a file read by readLeadImport, in the caller's transaction; with dryRun only counts.
 * `budgetMs` bounds how long the writing may take: on the embedded database the import's transaction holds the one
 * connection, and every other request waits for it. Past it, the import fails with a 413 between two batches, and its
 * transaction, rolled back, has written nothing.
 */
export async function writeLeadImport(
  trx: Kysely<DB>, workspaceId: string, read: ReadImport, options: ImportOptions, clock: Clock, budgetMs = Infinity,
): Promise<LeadImportResult> {
  // One time for the whole import: its leads are created at it, and found by it for their `lead.created` events.
  const now = clock.now();
  const at: Clock = { now: () => now };
  const nextBatch = batchPacer(budgetMs);
  const counts = read.recordCount === 0
    ? { created: 0, updated: 0 }
    : options.dedupe === 'email'
      ? await upsertByEmail(trx, workspaceId, read, options.dryRun, at, nextBatch)
      : await insertAll(trx, workspaceId, read, options.dryRun, at, nextBatch);
  if (!options.dryRun && counts.created > 0) {
    // The leads this transaction inserted: made at `now`, their row version written by this transaction.
    await emitLeadsCreated(trx, workspaceId, sql`l.created_at = ${now}::timestamptz AND l.xmin = pg_current_xact_id()::xid`, now);
  }
  if (!options.dryRun && counts.updated > 0) {
    // A lead the file moved to WON or LOST gets no more follow-ups (DESIGN §13).
    await stopClosedLeads(trx, workspaceId, sql<boolean>`l.updated_at = ${now}::timestamptz AND l.xmin = pg_current_xact_id()::xid`, now);
  }
  return {
    ...counts,
    skipped: read.skipped,
    errors: read.errors,
    errorCount: read.errorCount,
    warnings: read.warnings,
    rows: read.rows,
    dryRun: options.dryRun,
    columns: read.columns,
  };
}

/**
 * The answer for someone who may write leads but not read them (a key with leads:write and no leads:read). With
 * `dedupe=email`, a row that updated a lead rather than created one would tell them that its e-mail was a lead's
 * already, dry run or not: every row written is counted in `created`, and `updated` is 0, as an import without dedupe
 * answers. `rows` stays created + updated + skipped; the audit entry keeps the true counts.
 */
export function withoutLeadReads(result: LeadImportResult): LeadImportResult {
  return { ...result, created: result.created + result.updated, updated: 0 };
}

/** What an import's audit entry records: counts and choices, never a lead's data. */
export function importAuditDetails(file: Pick<ImportFile, 'format'>, options: ImportOptions, result: LeadImportResult): AuditDetails {
  return {
    format: file.format,
    rows: result.rows,
    created: result.created,
    updated: result.updated,
    skipped: result.skipped,
    dedupe: options.dedupe,
    dryRun: options.dryRun,
  };
}

/** A record's fields as columns of a new lead; a field the row does not give is null, the status DISCOVERY. */
const INSERT_FROM_RECORDS = (workspaceId: string, now: Date) => sql`
  INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at, time_zone)
  SELECT gen_random_uuid(), ${workspaceId}::uuid, r->>'name', r->>'email', r->>'company_name', r->>'company_website',
         coalesce(r->>'status', 'DISCOVERY'), (r->>'assigned_to_user_id')::uuid, ${now}::timestamptz, ${now}::timestamptz, r->>'time_zone'`;

/**
 * What runs before each batch: it lets the event loop answer what came in meanwhile (PGlite runs a statement on this
 * thread and settles it with a promise alone, so that statements in a row, however many, never let the event loop
 * take a request in between), then stops the import once it has written for longer than its budget. The budget is
 * real time, as the CPU pool's is, not the injected clock's.
 */
type BatchPacer = () => Promise<void>;

function batchPacer(budgetMs: number): BatchPacer {
  const started = performance.now();
  return async () => {
    await new Promise((resolve) => setImmediate(resolve));
    if (performance.now() - started < budgetMs) return;
    const budget = budgetMs >= 1000 ? `${Math.round(budgetMs / 100) / 10} s` : `${budgetMs} ms`;
    throw new AppError('payload_too_large', `Writing the leads took longer than the ${budget} an import may take `
      + '(IMPORT_WRITE_SECONDS), and nothing was imported; split the file into smaller ones.');
  };
}

async function checkAssignees(trx: Kysely<DB>, workspaceId: string, read: ReadImport): Promise<void> {
  if (read.assignees.length === 0) return;
  // The rows were checked against the workspace's users before the transaction; a user removed since then is
  // found here, under a lock that keeps the others until the import commits.
  const found = await sql<{ id: string }>`
    SELECT id FROM users
    WHERE workspace_id = ${workspaceId} AND id IN (SELECT jsonb_array_elements_text(${JSON.stringify(read.assignees)}::jsonb)::uuid)
    FOR KEY SHARE`.execute(trx);
  if (found.rows.length !== read.assignees.length) {
    throw invalid('assignedToUserId', 'names a user who left the workspace during the import; import the file again');
  }
}

async function insertAll(
  trx: Kysely<DB>, workspaceId: string, read: ReadImport, dryRun: boolean, clock: Clock, nextBatch: BatchPacer,
): Promise<{ created: number; updated: number }> {
  if (!dryRun) {
    await checkAssignees(trx, workspaceId, read);
    const now = clock.now();
    for (const batch of read.records) {
      await nextBatch();
      await sql`${INSERT_FROM_RECORDS(workspaceId, now)} FROM jsonb_array_elements(${batch}::jsonb) AS r`.execute(trx);
    }
  }
  return { created: read.recordCount, updated: 0 };
}

/**
 * With dedupe=email: each record with an e-mail updates the workspace's lead with that e-mail (the oldest, should
 * there be several), only in the fields its rows gave; the others are inserted. One statement a batch does both (no
 * two batches hold one e-mail); a dry run runs only its count.
 */
async function upsertByEmail(
  trx: Kysely<DB>, workspaceId: string, read: ReadImport, dryRun: boolean, clock: Clock, nextBatch: BatchPacer,
): Promise<{ created: number; updated: number }> {
  if (!dryRun) {
    await sql`SELECT pg_advisory_xact_lock(${DEDUPE_LOCK}, hashtext(${workspaceId}))`.execute(trx);
    await checkAssignees(trx, workspaceId, read);
  }
  const now = clock.now();
  const counts = { created: 0, updated: 0 };
  for (const batch of read.records) {
    await nextBatch();
    const done = await upsertBatch(trx, workspaceId, batch, dryRun, now);
    counts.created += done.created;
    counts.updated += done.updated;
  }
  return counts;
}

/** The fields a record may give, as leads' columns; `cast` for a column that is not text. */
const RECORD_FIELDS: ReadonlyArray<{ field: string; cast?: string }> = [
  { field: 'name' }, { field: 'email' }, { field: 'company_name' }, { field: 'company_website' }, { field: 'status' },
  { field: 'assigned_to_user_id', cast: '::uuid' }, { field: 'time_zone' },
];

/** A column's value after a record: the record's where it gives the field, the lead's own where it does not. */
const given = ({ field, cast = '' }: { field: string; cast?: string }) =>
  sql.raw(`CASE WHEN i.record ? '${field}' THEN (i.record->>'${field}')${cast} ELSE l.${field} END`);

/**
 * One batch of a dedupe import, in one statement that reads the leads its e-mails name and no others, whatever the
 * planner believes of the tables. Each e-mail is looked up on its own in leads_by_email, and each lead found is
 * updated through its primary key. A join of the batch with the workspace's leads was planned, on the statistics of
 * a table of a few rows, as a read of every lead of the workspace for each batch of 250 rows: an import's time grew
 * as the workspace times the file, and a 50,000-row import on a long-used embedded installation took 26 minutes.
 * Planned at each execution (`planEachTime`): a plan kept from when the table was small is the plan of a small table.
 */
async function upsertBatch(trx: Kysely<DB>, workspaceId: string, records: string, dryRun: boolean, now: Date): Promise<{ created: number; updated: number }> {
  const input = sql`
    input AS (
      SELECT r AS record, (r->>'n')::int AS n, r->>'key' AS key FROM jsonb_array_elements(${records}::jsonb) AS r
    ),
    target AS (
      SELECT i.key, found.id
      FROM input i CROSS JOIN LATERAL (
        SELECT l.id FROM leads l
        WHERE l.workspace_id = ${workspaceId} AND lower(l.email) = i.key
        ORDER BY l.created_at, l.id
        LIMIT 1
      ) AS found
    )`;
  // The leads updated are those `target` found in the workspace, by their ids alone: the workspace named again here
  // would offer the planner a read of all the workspace's leads. A lead the record leaves as it is, is not written:
  // importing a file again rewrites no row (nor its index entries, the lead search's trigrams among them), and leaves
  // updated_at at the last real change.
  const columns = sql.join(RECORD_FIELDS.map(({ field }) => sql.ref(`l.${field}`)));
  const values = sql.join(RECORD_FIELDS.map(given));
  const writes = dryRun ? sql`` : sql`,
    updated AS (
      UPDATE leads l SET
        ${sql.join(RECORD_FIELDS.map((column) => sql`${sql.raw(column.field)} = ${given(column)}`))},
        -- Never backwards: another process's clock may lag this one's.
        updated_at = GREATEST(l.updated_at, ${now}::timestamptz)
      FROM target t JOIN input i ON i.key = t.key
      WHERE l.id = t.id AND (${columns}) IS DISTINCT FROM (${values})
    ),
    inserted AS (
      ${INSERT_FROM_RECORDS(workspaceId, now)}
      FROM (SELECT i.record AS r FROM input i WHERE i.key IS NULL OR i.key NOT IN (SELECT key FROM target)) AS fresh
    )`;
  // A record that found its lead updated it with each of its rows; one that did not created a lead with its first
  // row and updated it with the others.
  const { rows } = await sql<{ created: number; updated: number }>`${planEachTime}
    WITH ${input}${writes}
    SELECT count(*) FILTER (WHERE t.id IS NULL)::int AS created,
           (coalesce(sum(i.n) FILTER (WHERE t.id IS NOT NULL), 0) + coalesce(sum(i.n - 1) FILTER (WHERE t.id IS NULL), 0))::int AS updated
    FROM input i LEFT JOIN target t ON t.key = i.key`.execute(trx);
  return rows[0] ?? { created: 0, updated: 0 };
}
