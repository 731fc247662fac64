// Shared pieces of the HTTP suites: problem-document checks, small request shortcuts, Link-header paging, polling,
// and database probes (audit rows, triggers that count or refuse writes) used where the API cannot say enough.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { APP_PAGES, ENTRY_PAGES } from '../../src/http/ui/app-pages.ts';
import { TRANSCRIPT, type ApiResponse, type TestApp } from '../helpers.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const LEAD_FIELDS = ['assignedToUserId', 'companyName', 'companyWebsite', 'createdAt', 'email', 'id', 'lastContactedAt', 'lastReplyAt', 'name', 'nextActionAt', 'status', 'timeZone', 'updatedAt'];
export const CALL_FIELDS = ['createdAt', 'durationSeconds', 'format', 'id', 'leadId', 'occurredAt', 'title', 'transcript'];
export const STEP_ORDER = ['RESEARCH', 'ANALYSIS', 'STRATEGY', 'WRITER'];
export const LEAD_STATUSES = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'];

/**
 * The routes that need no key. Anything else the app serves must name a scope: a route added without one fails
 * the route-access suite instead of being silently public.
 */
export const PUBLIC_ROUTES: ReadonlyArray<{ method: string; url: RegExp }> = [
  { method: 'GET', url: /^\/healthz$/ },
  { method: 'GET', url: /^\/readyz$/ },
  { method: 'GET', url: /^\/metrics$/ },
  { method: 'GET', url: /^\/api\/v1\/openapi\.json$/ },
  { method: 'GET', url: /^\/docs(\/.*)?$/ },
  // The web UI: its pages (the list its router and the server share) and built assets, and what a person does
  // before signing in.
  ...[...ENTRY_PAGES, ...APP_PAGES].map((page) => ({
    method: 'GET', url: new RegExp(`^${page.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`),
  })),
  { method: 'GET', url: /^\/(assets\/.+|[\w.-]+\.(html|svg|ico|png|txt|webmanifest|js|css))$/ },
  { method: 'GET', url: /^\/ui\/api\/setup$/ },
  { method: 'GET', url: /^\/ui\/api\/start$/ },
  { method: 'POST', url: /^\/ui\/api\/setup$/ },
  { method: 'POST', url: /^\/ui\/api\/session$/ },
  // A password reset link: its token is the credential.
  { method: 'POST', url: /^\/ui\/api\/password-reset(\/check)?$/ },
  // The unsubscribe link every e-mail carries (DESIGN §15): its token is the credential, and mail providers post it.
  { method: 'GET', url: /^\/unsubscribe\/:token$/ },
  { method: 'POST', url: /^\/unsubscribe\/:token$/ },
];

export function isPublicRoute(route: { method: string; url: string }): boolean {
  return PUBLIC_ROUTES.some((p) => p.method === route.method && p.url.test(route.url));
}

/** Asserts an RFC 9457 problem document with the given status and code, whose requestId is the X-Request-Id. */
export function assertProblem(res: ApiResponse, status: number, code?: string, context = ''): void {
  const where = `${context ? `${context}: ` : ''}${res.text.slice(0, 500)}`;
  assert.equal(res.status, status, `expected ${status}, got ${res.status} — ${where}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, `content type — ${where}`);
  const body = res.json;
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `a JSON object — ${where}`);
  for (const field of ['type', 'title', 'detail', 'code', 'requestId']) {
    assert.equal(typeof body[field], 'string', `problem.${field} — ${where}`);
    assert.ok(body[field].length > 0, `problem.${field} is not empty — ${where}`);
  }
  assert.equal(body.status, status, `problem.status — ${where}`);
  assert.doesNotThrow(() => new URL(body.type), `problem.type is a URI — ${where}`);
  if (code) assert.equal(body.code, code, `problem.code — ${where}`);
  assert.match(body.code, /^[a-z]+(_[a-z]+)*$/, 'code is snake_case');
  const requestId = res.headers.get('x-request-id');
  assert.ok(requestId, 'X-Request-Id header');
  assert.equal(body.requestId, requestId, 'problem.requestId is the X-Request-Id');
  assertNoStackTrace(res);
}

/** Asserts a 400 invalid_request whose `errors` names each of `fields`. */
export function assertInvalid(res: ApiResponse, fields: string[], context = ''): void {
  assertProblem(res, 400, 'invalid_request', context);
  const errors = res.json.errors;
  assert.ok(Array.isArray(errors) && errors.length > 0, `errors[] — ${context} ${res.text}`);
  for (const e of errors) {
    assert.equal(typeof e.field, 'string');
    assert.equal(typeof e.message, 'string');
  }
  const named = new Set(errors.map((e: { field: string }) => e.field));
  for (const field of fields) assert.ok(named.has(field), `errors name ${field} (got ${[...named].join(', ')}) — ${context}`);
}

export function assertNoStackTrace(res: ApiResponse): void {
  assert.doesNotMatch(res.text, /\n\s+at\s|\bat [\w.<>]+ \(|node_modules|\.ts:\d+|file:\/\//, `no stack trace in ${res.text.slice(0, 300)}`);
}

export async function createLead(t: TestApp, key: string, body: Record<string, unknown> = { name: 'Ada Lovelace' }): Promise<any> {
  const res = await t.api('POST', '/api/v1/leads', { key, body });
  assert.equal(res.status, 201, res.text);
  return res.json;
}

export async function createCall(t: TestApp, key: string, leadId: string, body: Record<string, unknown> = { transcript: TRANSCRIPT }): Promise<any> {
  const res = await t.api('POST', `/api/v1/leads/${leadId}/calls`, { key, body });
  assert.equal(res.status, 201, res.text);
  return res.json;
}

export async function startRun(t: TestApp, key: string, leadId: string, callId: string): Promise<any> {
  const res = await t.api('POST', '/api/v1/runs', { key, body: { leadId, callId } });
  assert.equal(res.status, 202, res.text);
  return res.json;
}

/** The path and query of the `rel="next"` link, or null when there is none. */
export function nextLink(res: ApiResponse): string | null {
  const link = res.headers.get('link');
  if (!link) return null;
  const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  assert.ok(match?.[1], `a rel="next" link in ${link}`);
  const url = new URL(match[1], 'http://placeholder');
  return url.pathname + url.search;
}

/** Follows `Link: rel="next"` from `first` and returns every page's items in order. */
export async function walkPages(t: TestApp, key: string, first: string, options: { maxPages?: number; onPage?: (page: number) => Promise<void> } = {}) {
  const items: any[] = [];
  const pageSizes: number[] = [];
  let next: string | null = first;
  for (let page = 0; next; page++) {
    assert.ok(page < (options.maxPages ?? 100), 'pagination ends');
    const res: ApiResponse = await t.api('GET', next, { key });
    assert.equal(res.status, 200, res.text);
    items.push(...res.json.data);
    pageSizes.push(res.json.data.length);
    next = nextLink(res);
    await options.onPage?.(page);
  }
  return { items, pageSizes };
}

/** Polls `probe` until `done` holds; fails after `timeoutMs`. No fixed sleeps in the tests themselves. */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`${options.what ?? 'condition'} did not hold within ${options.timeoutMs ?? 5_000} ms (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
}

export function db(t: TestApp): Kysely<DB> {
  return t.database.db;
}

export async function auditRows(t: TestApp, filter: { workspaceId?: string; requestId?: string } = {}) {
  let query = db(t).selectFrom('audit_log').selectAll();
  if (filter.workspaceId) query = query.where('workspace_id', '=', filter.workspaceId);
  if (filter.requestId) query = query.where('request_id', '=', filter.requestId);
  return query.orderBy('occurred_at').orderBy('id').execute();
}

export async function countRows(t: TestApp, table: 'leads' | 'calls' | 'runs' | 'audit_log' | 'email_drafts', workspaceId?: string): Promise<number> {
  let query = db(t).selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n'));
  if (workspaceId) query = query.where('workspace_id', '=', workspaceId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Makes every audit insert whose user agent is `userAgent` fail inside the database, so that a request can be
 * made to fail after its change was written (to see the transaction roll back, and the error answered as a 500).
 */
export async function refuseAuditFor(t: TestApp, userAgent: string): Promise<void> {
  await sql.raw(`CREATE OR REPLACE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.user_agent = ${quote(userAgent)} THEN RAISE EXCEPTION 'audit refused by the test (secret detail 7f3a)'; END IF;
      RETURN NEW;
    END $$`).execute(db(t));
  await sql.raw('DROP TRIGGER IF EXISTS test_refuse_audit ON audit_log').execute(db(t));
  await sql.raw('CREATE TRIGGER test_refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()').execute(db(t));
}

/** Records every write of api_keys.last_used_at in `test_last_used_writes`, so tests can count them. */
export async function countLastUsedWrites(t: TestApp): Promise<(keyId: string) => Promise<Array<{ value: Date; writtenAt: Date }>>> {
  await sql.raw(`CREATE TABLE IF NOT EXISTS test_last_used_writes (
    key_id uuid NOT NULL, value timestamptz, written_at timestamptz NOT NULL DEFAULT clock_timestamp(), seq bigserial PRIMARY KEY)`).execute(db(t));
  await sql.raw(`CREATE OR REPLACE FUNCTION test_record_last_used() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.last_used_at IS DISTINCT FROM OLD.last_used_at THEN
        INSERT INTO test_last_used_writes (key_id, value) VALUES (NEW.id, NEW.last_used_at);
      END IF;
      RETURN NEW;
    END $$`).execute(db(t));
  await sql.raw('DROP TRIGGER IF EXISTS test_record_last_used ON api_keys').execute(db(t));
  await sql.raw('CREATE TRIGGER test_record_last_used AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION test_record_last_used()').execute(db(t));
  return async (keyId) => {
    const result = await sql<{ value: Date; written_at: Date }>`
      SELECT value, written_at FROM test_last_used_writes WHERE key_id = ${keyId} ORDER BY seq`.execute(db(t));
    return result.rows.map((r) => ({ value: new Date(r.value), writtenAt: new Date(r.written_at) }));
  };
}

function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Newest first, as the API orders leads and runs: by time descending, then id descending. */
export function newestFirst<T>(items: T[], time: (item: T) => string, id: (item: T) => string): T[] {
  return [...items].sort((a, b) => {
    const ta = Date.parse(time(a));
    const tb = Date.parse(time(b));
    if (ta !== tb) return tb - ta;
    return id(a) < id(b) ? 1 : id(a) > id(b) ? -1 : 0;
  });
}

/** A person signed in to the web UI: the session cookie, its CSRF token and the session answer. */
export interface Browser {
  cookie: string;
  csrf: string;
  session: any;
}

/** The browser a sign-in or setup answer leaves behind. */
export function browserOf(res: ApiResponse): Browser {
  assert.ok(res.status === 200 || res.status === 201, res.text);
  const cookie = res.headers.get('set-cookie') ?? '';
  assert.match(cookie, /^leadrun_session=[A-Za-z0-9_-]{43};/);
  return { cookie: cookie.split(';')[0]!, csrf: res.json.csrfToken, session: res.json };
}

/** A request as the browser makes it: the session cookie, and the CSRF header on changes. */
export function asBrowser(t: TestApp, who: Browser | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return t.api(method, path, {
    ...(body === undefined ? {} : { body }),
    headers: { ...(who ? { cookie: who.cookie } : {}), ...(who && method !== 'GET' ? { 'x-csrf-token': who.csrf } : {}), ...headers },
  });
}

/** A draft of the run, approved to leave next week: a SCHEDULED delivery in the outbox, which no runner sends. */
export async function waitingEmail(t: TestApp, workspaceId: string, runId: string): Promise<string> {
  const [draftId, deliveryId] = [randomUUID(), randomUUID()];
  const now = new Date();
  // A version of its own, so that one run can hold several such e-mails.
  const last = await t.database.db.selectFrom('email_drafts').select((eb) => eb.fn.max('version').as('version'))
    .where('run_id', '=', runId).executeTakeFirst();
  await t.database.db.insertInto('email_drafts').values({
    id: draftId, workspace_id: workspaceId, run_id: runId, version: Number(last?.version ?? 0) + 1, status: 'APPROVED', to_address: 'secret@a.example',
    subject: 'Secret', body: 'Secret', created_at: now, feedback: null, decided_at: now, decided_by_key_id: null, decided_by_user_id: null,
  }).execute();
  await t.database.db.insertInto('email_deliveries').values({
    id: deliveryId, workspace_id: workspaceId, run_id: runId, draft_id: draftId, sender_user_id: null, method: 'send', status: 'SCHEDULED',
    message_id: `<${deliveryId}@a.example>`, queued_at: now, delivered_at: null, error: null, response: null,
    scheduled_for: new Date(now.getTime() + 7 * 86_400_000), waiting_for: 'sendAt',
  }).execute();
  return deliveryId;
}

/** A reply to an e-mail of the run, as the delivery and the reply check write them; answers the reply's id. */
export async function repliedEmail(t: TestApp, workspaceId: string, runId: string): Promise<string> {
  const [draftId, deliveryId, replyId] = [randomUUID(), randomUUID(), randomUUID()];
  const now = new Date();
  const last = await t.database.db.selectFrom('email_drafts').select((eb) => eb.fn.max('version').as('version'))
    .where('run_id', '=', runId).executeTakeFirst();
  await t.database.db.insertInto('email_drafts').values({
    id: draftId, workspace_id: workspaceId, run_id: runId, version: Number(last?.version ?? 0) + 1, status: 'SENT', to_address: 'secret@a.example',
    subject: 'Secret', body: 'Secret', created_at: now, feedback: null, decided_at: null, decided_by_key_id: null, decided_by_user_id: null,
  }).execute();
  await t.database.db.insertInto('email_deliveries').values({
    id: deliveryId, workspace_id: workspaceId, run_id: runId, draft_id: draftId, sender_user_id: null, method: 'send', status: 'DELIVERED',
    message_id: `<${randomUUID()}@a.example>`, attempts: 1, queued_at: now, delivered_at: now, error: null, response: '250 ok',
  }).execute();
  await t.database.db.insertInto('email_replies').values({
    id: replyId, workspace_id: workspaceId, delivery_id: deliveryId, run_id: runId, message_id: `${randomUUID()}@a.example`,
    from_address: 'secret@a.example', subject: 'Re: Secret', snippet: 'Secret reply', received_at: now, found_at: now,
  }).execute();
  return replyId;
}
