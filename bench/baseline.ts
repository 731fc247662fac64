// The baseline: a bare node:http + pg server that answers the benchmark's requests with the equivalent SQL and
// nothing else: no framework, no key check, no validation beyond what the SQL needs, no audit but the POST's row,
// no logs, no metrics. The workspace comes from the X-Workspace-Id header the load generator sends with the key.
// It is what Node.js and PostgreSQL can do on this machine; leadrun is measured against it.
//
// Started by bench/run.ts as a child process: DATABASE_URL, POOL_SIZE, PUBLIC_URL; it prints {"port": N} when ready.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const publicUrl = process.env.PUBLIC_URL ?? 'http://localhost:3000';

interface LeadRow {
  id: string; name: string; email: string | null; company_name: string | null; company_website: string | null;
  status: string; assigned_to_user_id: string | null; created_at: Date; updated_at: Date;
}

const toLead = (r: LeadRow) => ({
  id: r.id, name: r.name, email: r.email, companyName: r.company_name, companyWebsite: r.company_website, status: r.status,
  assignedToUserId: r.assigned_to_user_id, createdAt: r.created_at.toISOString(), updatedAt: r.updated_at.toISOString(),
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

// The columns of a Lead, and only those: the table also holds what leadrun stores for itself (its JSON, its search text).
const LEAD_COLUMNS = 'id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at';

async function listLeads(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const workspaceId = req.headers['x-workspace-id'] as string;
  const limit = Number(url.searchParams.get('limit') ?? 50);
  const { rows } = await pool.query<LeadRow>(
    `SELECT ${LEAD_COLUMNS} FROM leads WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [workspaceId, limit + 1]);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const headers: Record<string, string> = {};
  if (rows.length > limit && last) {
    const cursor = Buffer.from(`${last.created_at.toISOString()}|${last.id}`).toString('base64url');
    headers.link = `</api/v1/leads?limit=${limit}&cursor=${cursor}>; rel="next"`;
  }
  json(res, 200, { data: items.map(toLead) }, headers);
}

async function readBody(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function createLead(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const workspaceId = req.headers['x-workspace-id'] as string;
  const body = await readBody(req);
  const now = new Date();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<LeadRow>(
      `INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $8) RETURNING ${LEAD_COLUMNS}`,
      [randomUUID(), workspaceId, body.name, body.email ?? null, body.companyName ?? null, body.companyWebsite ?? null, body.status ?? 'DISCOVERY', now]);
    const lead = rows[0]!;
    await client.query(
      `INSERT INTO audit_log (id, workspace_id, source, key_id, user_id, action, target_type, target_id, outcome, status, request_id, ip, user_agent, occurred_at)
       VALUES ($1, $2, 'api', NULL, NULL, 'lead.created', 'lead', $3, 'success', 201, $4, $5, $6, $7)`,
      [randomUUID(), workspaceId, lead.id, randomUUID(), req.socket.remoteAddress ?? null, req.headers['user-agent'] ?? null, now]);
    await client.query('COMMIT');
    json(res, 201, toLead(lead), { location: `/api/v1/leads/${lead.id}` });
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

// The same statement as leadrun's getRun (src/domain/runs/runs.ts): PostgreSQL assembles steps and draft as JSON,
// which pg parses and the server stringifies again.
const RUN_SQL = `
  SELECT r.id, r.status, r.lead_id, r.call_id, r.trace_id, r.error, r.tokens_used,
    leadrun_iso(r.started_at) AS started_at, leadrun_iso(r.completed_at) AS completed_at,
    (SELECT json_agg(json_build_object(
        'node', s.node, 'status', s.status, 'output', s.output, 'attempts', s.attempts,
        'startedAt', leadrun_iso(s.started_at), 'completedAt', leadrun_iso(s.completed_at), 'error', s.error,
        'engine', s.engine, 'model', s.model, 'promptVersion', s.prompt_version, 'durationMs', s.duration_ms,
        'usage', CASE WHEN s.input_tokens IS NULL AND s.output_tokens IS NULL THEN NULL ELSE json_build_object(
          'inputTokens', coalesce(s.input_tokens, 0), 'outputTokens', coalesce(s.output_tokens, 0),
          'totalTokens', coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0)) END)
      ORDER BY s.position) FROM run_steps s WHERE s.run_id = r.id) AS steps,
    (SELECT json_build_object('id', d.id, 'status', d.status, 'subject', d.subject, 'body', d.body, 'to', d.to_address, 'version', d.version)
     FROM email_drafts d WHERE d.run_id = r.id ORDER BY d.version DESC LIMIT 1) AS email_draft
  FROM runs r WHERE r.workspace_id = $1 AND r.id = $2`;

async function getRun(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
  const workspaceId = req.headers['x-workspace-id'] as string;
  const { rows } = await pool.query(RUN_SQL, [workspaceId, id]);
  const r = rows[0];
  if (!r) return json(res, 404, { title: 'Not found' });
  json(res, 200, {
    data: {
      id: r.id, status: r.status, leadId: r.lead_id, callId: r.call_id, startedAt: r.started_at, completedAt: r.completed_at,
      error: r.error, tokensUsed: r.tokens_used, steps: r.steps, emailDraft: r.email_draft, traceUrl: `${publicUrl}/runs/${r.id}/trace`,
    },
  });
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://baseline');
  let work: Promise<void> | void;
  if (req.method === 'GET' && url.pathname === '/api/v1/leads') work = listLeads(req, res, url);
  else if (req.method === 'POST' && url.pathname === '/api/v1/leads') work = createLead(req, res);
  else if (req.method === 'GET' && url.pathname.startsWith('/api/v1/runs/')) work = getRun(req, res, url.pathname.slice('/api/v1/runs/'.length));
  else if (req.method === 'GET' && url.pathname === '/healthz') work = json(res, 200, { status: 'ok' });
  else work = json(res, 404, { title: 'Not found' });
  if (work) {
    work.catch((error: unknown) => {
      process.stderr.write(`baseline: ${(error as Error).message}\n`);
      if (!res.headersSent) json(res, 500, { title: 'Internal error' });
      else res.destroy();
    });
  }
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});

process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.end().then(() => process.exit(0));
});
