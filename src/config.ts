// Environment → a typed, validated Config. A bad value stops the program with one line naming the variable.
import path from 'node:path';
import { emailProblem } from './domain/validation.ts';

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | null;
  /**
   * How long a request or a worker's step waits for one of the process's PostgreSQL connections before it gives up
   * (DATABASE_POOL_WAIT_SECONDS): a request is then answered 503 `unavailable`, having read and written nothing.
   */
  databasePoolWaitMs: number;
  dataDir: string;
  freePlanMonthlyRuns: number;
  rateLimitPerMinute: number;
  /**
   * The model endpoint; `maxConcurrency` (LLM_MAX_CONCURRENCY) is how many calls every worker process together may
   * have in flight to it, lowered for a while after a 429 (src/agent/engines/limiter.ts); `giveUpAfterMs`
   * (LLM_RATE_LIMIT_GIVE_UP_MINUTES) how long its refusals may put a step off before the run fails.
   */
  llm: { baseUrl: string; apiKey: string | null; model: string; timeoutMs: number; maxConcurrency: number; giveUpAfterMs: number } | null;
  /** Tokens one run may spend on model calls, over all its steps and attempts. */
  runTokenBudget: number;
  traceUrlTemplate: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Whether RESEARCH and the mail servers may reach private, loopback and link-local addresses (tests, intranet mail
   * servers). ALLOW_PRIVATE_HOSTS, or its older name RESEARCH_ALLOW_PRIVATE_HOSTS.
   */
  allowPrivateHosts: boolean;
  /** The installation's SMTP server for workspaces without their own (SMTP_URL: smtp://user:pass@host:port, smtps://…). */
  smtpUrl: string | null;
  /** The installation's sender (MAIL_FROM: `Name <address>` or `address`). */
  mailFrom: { name: string | null; address: string } | null;
  /** The installation's postal address for the e-mail footer (MAIL_POSTAL_ADDRESS), for workspaces that set none. */
  mailPostalAddress: string | null;
  /** How often each workspace's inbox is read for replies (MAIL_REPLY_CHECK_SECONDS, default 60). */
  replyCheckIntervalMs: number;
  /**
   * The waits before each retry of a failed webhook delivery (WEBHOOK_RETRY_SECONDS); null: the schedule of
   * src/jobs/handlers/webhook-deliver.ts, about 5 s, 1 min, 10 min, 1 h, 6 h and 24 h.
   */
  webhookRetryDelaysMs: number[] | null;
  /** The 32-byte key that encrypts stored mail passwords (SECRETS_KEY, base64 or hex); null: one kept in DATA_DIR. */
  secretsKey: Buffer | null;
  redisUrl: string | null;
  /** Prefix of every key leadrun writes to Redis, so that several deployments (or test runs) can share one. */
  redisKeyPrefix: string;
  /** Which proxies' X-Forwarded-* headers to believe: false (none), true (any), or their addresses. */
  trustProxy: boolean | string[];
  /** More host names (besides PUBLIC_URL's and loopback names) under which the web UI's API answers. */
  allowedHosts: string[];
  /** OTLP/HTTP base address for traces; none sent when unset. */
  otelEndpoint: string | null;
  workerConcurrency: number;
  /** How long a worker holds a run without renewing its lease; a dead worker's run is taken over after it. */
  runLeaseMs: number;
  /** The base delay of a step's exponential retry backoff. */
  stepRetryBaseMs: number;
  /** How long a delivery approved in the web UI waits before it is sent, so that the person can undo it. */
  approvalUndoMs: number;
  /** Threads of the CPU pool (page reading, the offline engine, the grounding check); null: from the core count. */
  cpuThreads: number | null;
  /** How long one piece of CPU work over untrusted input may take before its thread is ended. */
  cpuBudgetMs: number;
  /** How long a lead import may write, holding its transaction (on the embedded database, the one connection). */
  importWriteMs: number;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable} ${message}`);
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function boolean(env: Env, name: string): boolean {
  const raw = text(env, name)?.toLowerCase() ?? null;
  if (raw === null || ['0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  throw new ConfigError(name, `must be true or false (got "${raw}")`);
}


/** MAIL_FROM: `Name <address>`, `"Name" <address>` or a bare address. */
function mailFrom(env: Env): Config['mailFrom'] {
  const raw = text(env, 'MAIL_FROM');
  if (raw === null) return null;
  const named = /^\s*"?([^"<>]*?)"?\s*<([^<>]+)>\s*$/.exec(raw);
  const name = named ? named[1]!.trim() || null : null;
  const address = (named ? named[2]! : raw).trim();
  const problem = emailProblem(address);
  if (problem) {
    throw new ConfigError('MAIL_FROM', `must be an e-mail address or "Name <address>" (got "${raw}"; ${problem})`);
  }
  return { name, address };
}

/** SECRETS_KEY: 32 bytes, as 64 hex digits or base64. */
function secretsKey(env: Env): Buffer | null {
  const raw = text(env, 'SECRETS_KEY');
  if (raw === null) return null;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(raw) && key.toString('base64').replace(/=+$/, '') !== raw.replace(/=+$/, ''))) {
    throw new ConfigError('SECRETS_KEY', 'must be 32 bytes, as 64 hex digits or base64 (e.g. the output of `openssl rand -base64 32`)');
  }
  return key;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = text(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute URL (got "${raw}")`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL (got "${raw}")`);
  }
  return raw;
}

function redisKeyPrefix(env: Env): string {
  const raw = text(env, 'REDIS_KEY_PREFIX') ?? 'leadrun:';
  if (!/^[\x21-\x7e]{1,64}$/.test(raw)) throw new ConfigError('REDIS_KEY_PREFIX', `must be 1 to 64 visible ASCII characters (got "${raw}")`);
  return raw;
}

/** TRUST_PROXY: unset or false; true; or the proxies' addresses (or CIDR ranges) separated by commas. */
function trustProxy(env: Env): boolean | string[] {
  const raw = text(env, 'TRUST_PROXY');
  if (raw === null || /^(false|no|off|0)$/i.test(raw)) return false;
  if (/^(true|yes|on|1)$/i.test(raw)) return true;
  const addresses = raw.split(',').map((a) => a.trim()).filter(Boolean);
  if (addresses.every((a) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(a))) return addresses;
  throw new ConfigError('TRUST_PROXY', `must be true, false, or proxy addresses separated by commas (got "${raw}")`);
}

// A host name or an IP address, IPv6 in brackets: what a Host header holds before its port.
const HOST_NAME = /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(\.[a-z0-9_-]+)*)$/;

/** ALLOWED_HOSTS: host names separated by commas, lower-cased, without a trailing dot. */
function allowedHosts(env: Env): string[] {
  const raw = text(env, 'ALLOWED_HOSTS');
  if (raw === null) return [];
  const names = raw.split(',').map((name) => name.trim().toLowerCase().replace(/\.$/, '')).filter(Boolean);
  const bad = names.find((name) => !HOST_NAME.test(name));
  if (bad !== undefined) throw new ConfigError('ALLOWED_HOSTS', `must be host names separated by commas, without a scheme, port or path (got "${bad}")`);
  return names;
}

const MAX_WEBHOOK_RETRIES = 20;
const MAX_WEBHOOK_RETRY_SECONDS = 7 * 24 * 3600;

/** WEBHOOK_RETRY_SECONDS: seconds separated by commas, one wait before each retry (`5,60,600`: three retries). */
function webhookRetryDelays(env: Env): number[] | null {
  const raw = text(env, 'WEBHOOK_RETRY_SECONDS');
  if (raw === null) return null;
  const waits = raw.split(',').map((wait) => wait.trim());
  if (waits.length > MAX_WEBHOOK_RETRIES || waits.some((wait) => !/^\d+$/.test(wait) || Number(wait) < 1 || Number(wait) > MAX_WEBHOOK_RETRY_SECONDS)) {
    throw new ConfigError('WEBHOOK_RETRY_SECONDS', `must be 1 to ${MAX_WEBHOOK_RETRIES} whole numbers of seconds from 1 to ${MAX_WEBHOOK_RETRY_SECONDS}, separated by commas (got "${raw}")`);
  }
  return waits.map((wait) => Number(wait) * 1000);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const publicUrl = (url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '');

  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  }

  const llmBaseUrl = url(env, 'LLM_BASE_URL', ['http:', 'https:']);
  const llmModel = text(env, 'LLM_MODEL');
  const llmApiKey = text(env, 'LLM_API_KEY');
  if (llmBaseUrl && !llmModel) throw new ConfigError('LLM_MODEL', 'must be set when LLM_BASE_URL is set');
  if (llmModel && !llmBaseUrl) throw new ConfigError('LLM_BASE_URL', 'must be set when LLM_MODEL is set');
  if (llmApiKey && !llmBaseUrl) throw new ConfigError('LLM_BASE_URL', 'must be set when LLM_API_KEY is set');

  const traceUrlTemplate = text(env, 'TRACE_URL_TEMPLATE');
  if (traceUrlTemplate !== null) {
    if (!traceUrlTemplate.includes('{traceId}') && !traceUrlTemplate.includes('{runId}')) {
      throw new ConfigError('TRACE_URL_TEMPLATE', 'must contain {traceId} or {runId}');
    }
    url({ TRACE_URL_TEMPLATE: traceUrlTemplate.replaceAll('{traceId}', 'x').replaceAll('{runId}', 'x') }, 'TRACE_URL_TEMPLATE', ['http:', 'https:']);
  }

  return {
    port,
    host,
    publicUrl,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolWaitMs: integer(env, 'DATABASE_POOL_WAIT_SECONDS', 5, 1, 300) * 1000,
    dataDir: path.resolve(cwd, text(env, 'DATA_DIR') ?? '.leadrun'),
    freePlanMonthlyRuns: integer(env, 'FREE_PLAN_MONTHLY_RUNS', 100, 0, 1_000_000_000),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000_000),
    llm: llmBaseUrl && llmModel
      ? {
        baseUrl: llmBaseUrl, apiKey: llmApiKey, model: llmModel, timeoutMs: integer(env, 'LLM_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
        maxConcurrency: integer(env, 'LLM_MAX_CONCURRENCY', 16, 1, 1024),
        giveUpAfterMs: integer(env, 'LLM_RATE_LIMIT_GIVE_UP_MINUTES', 60, 1, 10_080) * 60_000,
      }
      : null,
    runTokenBudget: integer(env, 'RUN_TOKEN_BUDGET', 100_000, 1, 100_000_000),
    traceUrlTemplate,
    logLevel: logLevel as Config['logLevel'],
    allowPrivateHosts: text(env, 'ALLOW_PRIVATE_HOSTS') !== null
      ? boolean(env, 'ALLOW_PRIVATE_HOSTS')
      : boolean(env, 'RESEARCH_ALLOW_PRIVATE_HOSTS'),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: mailFrom(env),
    mailPostalAddress: text(env, 'MAIL_POSTAL_ADDRESS')?.slice(0, 500) ?? null,
    replyCheckIntervalMs: integer(env, 'MAIL_REPLY_CHECK_SECONDS', 60, 1, 3600) * 1000,
    webhookRetryDelaysMs: webhookRetryDelays(env),
    secretsKey: secretsKey(env),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: redisKeyPrefix(env),
    otelEndpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
    trustProxy: trustProxy(env),
    allowedHosts: allowedHosts(env),
    workerConcurrency: integer(env, 'WORKER_CONCURRENCY', 4, 1, 256),
    runLeaseMs: integer(env, 'RUN_LEASE_SECONDS', 15, 1, 3600) * 1000,
    stepRetryBaseMs: integer(env, 'STEP_RETRY_BASE_MS', 1000, 0, 600_000),
    approvalUndoMs: integer(env, 'APPROVAL_UNDO_SECONDS', 10, 0, 600) * 1000,
    cpuThreads: text(env, 'CPU_THREADS') === null ? null : integer(env, 'CPU_THREADS', 1, 1, 64),
    cpuBudgetMs: integer(env, 'CPU_BUDGET_MS', 10_000, 10, 600_000),
    importWriteMs: integer(env, 'IMPORT_WRITE_SECONDS', 60, 1, 3600) * 1000,
  };
}
