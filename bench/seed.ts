// The benchmark's data: a fresh PostgreSQL database (dropped afterwards) or a PGlite directory, seeded with bulk
// SQL (generate_series), never through the API. Each workspace gets an admin, one key with every scope, its leads
// and one call per lead. Timestamps have millisecond precision, as the application's clock writes them.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../src/db/schema.ts';
import { generateKey, keyDigest, SCOPES } from '../src/domain/keys/keys.ts';
import { createDatabaseOn } from '../test/support/postgres.ts';

export const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface SeedOptions {
  workspaces: number;
  leadsPerWorkspace: number;
  /** Base address of the company websites (the bench's loopback site server); each lead gets its own path. */
  siteUrl: string;
}

export interface SeededWorkspace {
  id: string;
  adminUserId: string;
  keyId: string;
  key: string;
}

export interface Seeded {
  workspaces: SeededWorkspace[];
  leads: number;
  calls: number;
}

export const TRANSCRIPT = [
  'Rep: Thanks for making time today.',
  'Prospect: Happy to. Our month-end reporting takes four days and the finance team is exhausted.',
  'Rep: What have you tried so far?',
  'Prospect: Spreadsheets, mostly. We looked at a tool last year but the price was too high for us.',
  'Prospect: Budget is approved for Q3 if a pilot shows results.',
  'Rep: Great, I will send over a pilot plan next week.',
].join('\n');

/** A new, empty PostgreSQL database; `drop` removes it (closing any session still on it). */
export function createBenchDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  return createDatabaseOn(PG_ADMIN_URL, 'leadrun_bench');
}

export async function seed(db: Kysely<DB>, options: SeedOptions): Promise<Seeded> {
  const created = new Date(Date.UTC(2025, 0, 1));
  const workspaces: SeededWorkspace[] = Array.from({ length: options.workspaces }, () => {
    const key = generateKey();
    return { id: randomUUID(), adminUserId: randomUUID(), keyId: randomUUID(), key };
  });
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('workspaces')
      .values(workspaces.map((w, i) => ({ id: w.id, name: `Bench workspace ${i}`, plan: 'PRO' as const, admin_user_id: null, created_at: created })))
      .execute();
    await trx.insertInto('users')
      .values(workspaces.map((w, i) => ({
        id: w.adminUserId, workspace_id: w.id, email: `admin${i}@bench.example`, name: `Admin ${i}`, role: 'ADMIN' as const, password_hash: null, created_at: created,
      })))
      .execute();
    await sql`UPDATE workspaces w SET admin_user_id = u.id FROM users u WHERE u.workspace_id = w.id`.execute(trx);
    await trx.insertInto('api_keys')
      .values(workspaces.map((w) => ({
        id: w.keyId, workspace_id: w.id, name: 'bench', prefix: w.key.slice(0, 10), digest: keyDigest(w.key), scopes: [...SCOPES],
        created_by_user_id: w.adminUserId, created_at: created, last_used_at: null, revoked_at: null,
      })))
      .execute();
    // Lead g of a workspace is created g seconds after the epoch above (plus the workspace's own milliseconds),
    // so pages are stable and every timestamp keeps millisecond precision.
    await sql`
      INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at)
      SELECT gen_random_uuid(), w.id, 'Lead ' || g, 'lead' || g || '@prospect' || (g % 97) || '.example',
             'Company ' || g || ' Ltd', ${options.siteUrl} || '/c/' || g,
             (ARRAY['DISCOVERY','CONTACTED','QUALIFIED','PROPOSAL','WON','LOST'])[1 + g % 6],
             NULL, ts, ts
      FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM workspaces) w
      CROSS JOIN generate_series(1, ${options.leadsPerWorkspace}::int) g
      CROSS JOIN LATERAL (SELECT ${created}::timestamptz + g * interval '1 second' + w.n * interval '1 millisecond' AS ts) t`.execute(trx);
    await sql`
      INSERT INTO calls (id, workspace_id, lead_id, title, occurred_at, duration_seconds, transcript, created_at)
      SELECT gen_random_uuid(), l.workspace_id, l.id, 'Discovery call', l.created_at, 1800, ${TRANSCRIPT}, l.created_at
      FROM leads l`.execute(trx);
  });
  // The tables seeded, as autovacuum would analyze them. Not the whole database: an ANALYZE of the still empty run
  // tables records them as empty, and the plans that leadrun's connections make from that (once, at their first
  // execution: plan_cache_mode=force_generic_plan) scan run_steps and runs whole at every claim, for as long as the
  // benchmark lasts, where a new install plans them as tables of some size until autovacuum analyzes them.
  await sql`ANALYZE workspaces, users, api_keys, leads, calls`.execute(db);
  const total = options.workspaces * options.leadsPerWorkspace;
  return { workspaces, leads: total, calls: total };
}

/** Leads with their call, a few per workspace, for the runs workload. */
export async function prospects(db: Kysely<DB>, perWorkspace: number): Promise<Map<string, Array<{ leadId: string; callId: string }>>> {
  const rows = await sql<{ workspace_id: string; lead_id: string; call_id: string }>`
    SELECT workspace_id, lead_id, id AS call_id FROM (
      SELECT c.*, row_number() OVER (PARTITION BY c.workspace_id ORDER BY c.created_at DESC) AS n FROM calls c) x
    WHERE n <= ${perWorkspace}`.execute(db);
  const byWorkspace = new Map<string, Array<{ leadId: string; callId: string }>>();
  for (const row of rows.rows) {
    const list = byWorkspace.get(row.workspace_id) ?? [];
    list.push({ leadId: row.lead_id, callId: row.call_id });
    byWorkspace.set(row.workspace_id, list);
  }
  return byWorkspace;
}

// People and companies for the search workload: names with accents and several scripts' worth of Latin letters, so
// that the fold (lower case, no accents) does real work. Each word's share of the leads is known: a first or last
// name is in 1 lead of 20, a company stem in 1 of 40, a company kind in 1 of 10.
const FIRST = ['Zoë', 'Ada', 'Grace', 'Björn', 'José', 'Chloé', 'Liam', 'Noah', 'Emma', 'Olivia', 'Mia', 'Lucas', 'Søren', 'Françoise', 'Jürgen',
  'Amélie', 'Mateo', 'Nina', 'Omar', 'Ingrid'];
const LAST = ['Ångström', 'Lovelace', 'Hopper', 'Müller', 'Dupont', 'García', 'Nakamura', 'Smith', 'Jones', 'Kowalski', 'Rossi', 'Novák',
  'Öztürk', 'Nguyen', 'Larsen', 'Brown', 'Fischer', 'Moreau', 'Silva', 'Wright'];
const STEM = ['Northwind', 'Contoso', 'Fabrikam', 'Initech', 'Globex', 'Umbrella', 'Hooli', 'Vandelay', 'Acme', 'Stark', 'Wayne', 'Tyrell',
  'Cyberdyne', 'Soylent', 'Wonka', 'Gringotts', 'Oscorp', 'Aperture', 'Massive', 'Dynamic', 'Blue Sun', 'Monarch', 'Krusty', 'Pied Piper',
  'Prestige', 'Sterling', 'Wernham', 'Dunder', 'Bluth', 'Gekko', 'Nakatomi', 'Omni', 'Rekall', 'Sirius', 'Spacely', 'Tessier', 'Virtucon',
  'Weyland', 'Yoyodyne', 'Zorg'];
const KIND = ['Traders', 'Systems', 'Industries', 'Labs', 'Holdings', 'Logistics', 'Foods', 'Energy', 'Analytics', 'Partners'];

/**
 * One workspace with `leads` leads of varied names, e-mails and companies (lead g's address holds its number g), for
 * the search workload; newest last, a second apart.
 */
export async function seedSearch(db: Kysely<DB>, leads: number): Promise<SeededWorkspace> {
  const created = new Date(Date.UTC(2025, 0, 1));
  const key = generateKey();
  const w: SeededWorkspace = { id: randomUUID(), adminUserId: randomUUID(), keyId: randomUUID(), key };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('workspaces').values({ id: w.id, name: 'Search bench', plan: 'PRO', admin_user_id: null, created_at: created }).execute();
    await trx.insertInto('users').values({
      id: w.adminUserId, workspace_id: w.id, email: 'admin@search-bench.example', name: 'Admin', role: 'ADMIN', password_hash: null, created_at: created,
    }).execute();
    await trx.updateTable('workspaces').set({ admin_user_id: w.adminUserId }).where('id', '=', w.id).execute();
    await trx.insertInto('api_keys').values({
      id: w.keyId, workspace_id: w.id, name: 'bench', prefix: key.slice(0, 10), digest: keyDigest(key), scopes: [...SCOPES],
      created_by_user_id: w.adminUserId, created_at: created, last_used_at: null, revoked_at: null,
    }).execute();
    await sql`
      INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at)
      SELECT gen_random_uuid(), ${w.id}, f || ' ' || l, leadrun_search_text(f || '.' || l) || g || '@' || lower(replace(c, ' ', '')) || '.example',
             c || ' ' || k, NULL, (ARRAY['DISCOVERY','CONTACTED','QUALIFIED','PROPOSAL','WON','LOST'])[1 + g % 6],
             CASE WHEN g % 3 = 0 THEN ${w.adminUserId}::uuid END, ts, ts
      FROM generate_series(1, ${leads}::int) g
      CROSS JOIN LATERAL (SELECT
        (${FIRST}::text[])[1 + g % 20] AS f, (${LAST}::text[])[1 + (g / 20) % 20] AS l,
        (${STEM}::text[])[1 + (g / 400) % 40] AS c, (${KIND}::text[])[1 + (g / 7) % 10] AS k,
        ${created}::timestamptz + g * interval '1 second' AS ts) x`.execute(trx);
  });
  await sql`ANALYZE`.execute(db);
  return w;
}
