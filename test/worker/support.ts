// Shortcuts for the worker tests: a lead with a call, runs started through the API, and reads of the run's rows
// straight from the database (what the worker wrote, not what the API renders).
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { Engine } from '../../src/agent/engine.ts';
import type { DB } from '../../src/db/schema.ts';
import { TRANSCRIPT, type TestApp } from '../helpers.ts';
import { testOfflineEngine } from '../support/cpu.ts';

const offlineEngine = testOfflineEngine();

export interface Prospect {
  leadId: string;
  callId: string;
}

/** A lead (with no website unless one is given, so RESEARCH touches no network) and one call with it. */
export async function createProspect(t: TestApp, key: string, companyWebsite: string | null = null): Promise<Prospect> {
  const lead = await t.api('POST', '/api/v1/leads', {
    key,
    body: { name: 'Ada Lovelace', email: 'ada@example.com', companyName: 'Analytical Engines Ltd', ...(companyWebsite ? { companyWebsite } : {}) },
  });
  assert.equal(lead.status, 201, lead.text);
  const call = await t.api('POST', `/api/v1/leads/${lead.json.id}/calls`, { key, body: { transcript: TRANSCRIPT, title: 'Discovery call' } });
  assert.equal(call.status, 201, call.text);
  return { leadId: lead.json.id, callId: call.json.id };
}

/** Starts a run through the API and returns its id. */
export async function startRunViaApi(t: TestApp, key: string, prospect: Prospect): Promise<string> {
  const res = await t.api('POST', '/api/v1/runs', { key, body: prospect });
  assert.equal(res.status, 202, res.text);
  return res.json.id as string;
}

/** A workspace with a key holding every scope, and one lead with a call. */
export async function setUp(t: TestApp, plan: 'free' | 'pro' = 'pro'): Promise<{ workspaceId: string; key: string; prospect: Prospect }> {
  const workspace = await t.workspace(plan);
  const { key } = await t.key(workspace.id);
  return { workspaceId: workspace.id, key, prospect: await createProspect(t, key) };
}

export interface StepRow {
  node: string;
  status: string;
  output: any;
  attempts: number;
  error: string | null;
  started_at: Date | null;
  completed_at: Date | null;
}

export async function stepsOf(db: Kysely<DB>, runId: string): Promise<StepRow[]> {
  return db.selectFrom('run_steps').select(['node', 'status', 'output', 'attempts', 'error', 'started_at', 'completed_at'])
    .where('run_id', '=', runId).orderBy('position').execute();
}

export async function stepOf(db: Kysely<DB>, runId: string, node: string): Promise<StepRow> {
  const step = (await stepsOf(db, runId)).find((s) => s.node === node);
  assert.ok(step, `run ${runId} has no ${node} step`);
  return step;
}

export async function runRow(db: Kysely<DB>, runId: string) {
  return db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
}

export async function draftCount(db: Kysely<DB>, runId: string): Promise<number> {
  const row = await db.selectFrom('email_drafts').select((eb) => eb.fn.countAll<string>().as('n')).where('run_id', '=', runId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function count(db: Kysely<DB>, table: 'runs' | 'run_steps' | 'email_drafts', workspaceId?: string): Promise<number> {
  let query = db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n'));
  if (table === 'run_steps') {
    if (workspaceId) query = query.where('run_id', 'in', (eb) => eb.selectFrom('runs').select('id').where('workspace_id', '=', workspaceId));
  } else if (workspaceId) {
    query = query.where('workspace_id', '=', workspaceId);
  }
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** Polls `probe` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Waits until the run's row has `status`. */
export function runReaches(db: Kysely<DB>, runId: string, status: string, timeoutMs = 15_000) {
  return eventually(`run ${runId} to be ${status}`, async () => {
    const row = await runRow(db, runId);
    return row.status === status ? row : undefined;
  }, timeoutMs);
}

/** An engine that behaves like the offline one except where a test overrides a method. */
export function engineWith(overrides: Partial<Pick<Engine, 'analyse' | 'strategise' | 'write'>>): Engine {
  return {
    name: 'offline',
    analyse: overrides.analyse ?? ((ctx) => offlineEngine.analyse(ctx)),
    strategise: overrides.strategise ?? ((ctx) => offlineEngine.strategise(ctx)),
    write: overrides.write ?? ((ctx) => offlineEngine.write(ctx)),
  };
}

/** Asserts the happy end of a run: AWAITING_APPROVAL, four COMPLETED steps, exactly one draft. */
export async function assertFinishedOnce(db: Kysely<DB>, runId: string, attempts: Partial<Record<string, number>> = {}): Promise<void> {
  const run = await runRow(db, runId);
  assert.equal(run.status, 'AWAITING_APPROVAL', `run ${runId} is ${run.status}: ${run.error ?? ''}`);
  assert.ok(run.completed_at, 'completed_at is set');
  assert.equal(run.lease_owner, null, 'AWAITING_APPROVAL holds no worker');
  const steps = await stepsOf(db, runId);
  assert.deepEqual(steps.map((s) => [s.node, s.status]), [
    ['RESEARCH', 'COMPLETED'], ['ANALYSIS', 'COMPLETED'], ['STRATEGY', 'COMPLETED'], ['WRITER', 'COMPLETED'],
  ]);
  for (const step of steps) {
    assert.equal(step.attempts, attempts[step.node] ?? 1, `${step.node} attempts`);
    assert.ok(step.output, `${step.node} has its output`);
    assert.equal(step.error, null, `${step.node} keeps no error`);
  }
  assert.equal(await draftCount(db, runId), 1, 'exactly one draft');
}

export interface Website {
  url: string;
  /** From now on the home page hangs until release(). */
  hold(): void;
  /** Answers every held request and stops holding. */
  release(): void;
  /** Requests waiting on hold right now. */
  held(): number;
  /** Requests received so far. */
  requests(): number;
  close(): Promise<void>;
}

/** A company website on 127.0.0.1 whose home page can be made to hang, for RESEARCH to be caught in the middle. */
export async function startWebsite(html: string): Promise<Website> {
  let holding = false;
  let received = 0;
  const waiting = new Set<ServerResponse>();
  const answer = (res: ServerResponse) => {
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  };
  const server = createServer((req, res) => {
    received += 1;
    if (req.url !== '/') {
      res.writeHead(404).end();
      return;
    }
    if (!holding) return answer(res);
    waiting.add(res);
    res.once('close', () => waiting.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    hold: () => { holding = true; },
    release() {
      holding = false;
      for (const res of waiting) answer(res);
      waiting.clear();
    },
    held: () => waiting.size,
    requests: () => received,
    close: () => new Promise<void>((resolve) => {
      for (const res of waiting) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
