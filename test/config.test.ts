// Configuration (DESIGN §6): the environment becomes a typed Config; a bad value stops the program at start with
// one clear line naming the variable.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';
import { runLeadrun, tempDir } from './cli/support.ts';

describe('loadConfig', () => {
  it('has the documented defaults for an empty environment', () => {
    const config = loadConfig({}, '/srv/leadrun');
    assert.equal(config.port, 3000);
    assert.equal(config.freePlanMonthlyRuns, 100);
    assert.equal(config.rateLimitPerMinute, 600);
    assert.equal(config.databaseUrl, null, 'no DATABASE_URL: the embedded database');
    assert.equal(config.dataDir, path.resolve('/srv/leadrun', '.leadrun'));
    assert.equal(config.llm, null, 'no model settings: the offline engine');
    assert.equal(config.traceUrlTemplate, null);
    assert.equal(config.allowPrivateHosts, false);
    assert.equal(config.logLevel, 'info');
    assert.match(config.publicUrl, /^http:\/\/[^/]+:3000$/);
    assert.ok(config.runLeaseMs > 0 && config.runLeaseMs <= 30_000, 'a dead worker\'s run is taken over within 30 s');
  });

  it('sizes the CPU pool and its budget, and refuses nonsense', () => {
    const defaults = loadConfig({}, '/srv/leadrun');
    assert.equal(defaults.cpuThreads, null, 'from the core count');
    assert.equal(defaults.cpuBudgetMs, 10_000);
    const set = loadConfig({ CPU_THREADS: '3', CPU_BUDGET_MS: '2500' }, '/srv/leadrun');
    assert.equal(set.cpuThreads, 3);
    assert.equal(set.cpuBudgetMs, 2500);
    assert.equal(defaults.importWriteMs, 60_000, 'a lead import writes for a minute at most');
    assert.equal(loadConfig({ IMPORT_WRITE_SECONDS: '300' }, '/srv/leadrun').importWriteMs, 300_000);
    for (const [variable, value] of [
      ['CPU_THREADS', '0'], ['CPU_THREADS', 'many'], ['CPU_BUDGET_MS', '1.5'], ['CPU_BUDGET_MS', '5'], ['IMPORT_WRITE_SECONDS', '0'],
    ]) {
      assert.throws(() => loadConfig({ [variable!]: value! }, '/srv/leadrun'), (error: unknown) =>
        error instanceof ConfigError && error.variable === variable && error.message.startsWith(`${variable} must be a whole number`));
    }
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://leads.example.com/',
      DATABASE_URL: 'postgres://app@db.internal:5432/leadrun',
      DATA_DIR: 'var/data',
      FREE_PLAN_MONTHLY_RUNS: '0',
      RATE_LIMIT_PER_MINUTE: '1200',
      LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      LLM_API_KEY: 'secret',
      LLM_MODEL: 'llama3.1',
      TRACE_URL_TEMPLATE: 'https://cloud.langfuse.com/trace/{traceId}',
      LOG_LEVEL: 'DEBUG',
      RESEARCH_ALLOW_PRIVATE_HOSTS: 'true',
    }, '/srv/leadrun');
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.publicUrl, 'https://leads.example.com', 'without the trailing slash');
    assert.equal(config.databaseUrl, 'postgres://app@db.internal:5432/leadrun');
    assert.equal(config.dataDir, '/srv/leadrun/var/data');
    assert.equal(config.freePlanMonthlyRuns, 0);
    assert.equal(config.rateLimitPerMinute, 1200);
    assert.deepEqual(config.llm, { baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'secret', model: 'llama3.1', timeoutMs: 60_000, maxConcurrency: 16, giveUpAfterMs: 3_600_000 });
    assert.equal(config.traceUrlTemplate, 'https://cloud.langfuse.com/trace/{traceId}');
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.allowPrivateHosts, true);
  });

  it('reads the engine, budget and tracing settings', () => {
    const config = loadConfig({
      LLM_BASE_URL: 'https://api.openai.com/v1', LLM_MODEL: 'gpt-4o-mini', LLM_TIMEOUT_SECONDS: '20',
      RUN_TOKEN_BUDGET: '5000', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    }, '/x');
    assert.deepEqual(config.llm, { baseUrl: 'https://api.openai.com/v1', apiKey: null, model: 'gpt-4o-mini', timeoutMs: 20_000, maxConcurrency: 16, giveUpAfterMs: 3_600_000 });
    assert.equal(loadConfig({ LLM_BASE_URL: 'http://m/v1', LLM_MODEL: 'm', LLM_MAX_CONCURRENCY: '64' }, '/x').llm?.maxConcurrency, 64);
    assert.equal(loadConfig({ LLM_BASE_URL: 'http://m/v1', LLM_MODEL: 'm', LLM_RATE_LIMIT_GIVE_UP_MINUTES: '5' }, '/x').llm?.giveUpAfterMs, 300_000);
    assert.equal(config.runTokenBudget, 5000);
    assert.equal(config.otelEndpoint, 'http://collector:4318');
    assert.equal(loadConfig({}, '/x').runTokenBudget, 100_000);
    assert.equal(loadConfig({}, '/x').otelEndpoint, null);
    for (const [name, value] of [
      ['RUN_TOKEN_BUDGET', '0'], ['LLM_TIMEOUT_SECONDS', 'soon'], ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
      ['LLM_MAX_CONCURRENCY', '0'], ['LLM_MAX_CONCURRENCY', '1025'], ['LLM_MAX_CONCURRENCY', '-4'], ['LLM_MAX_CONCURRENCY', '8.5'],
      ['LLM_RATE_LIMIT_GIVE_UP_MINUTES', '0'], ['LLM_RATE_LIMIT_GIVE_UP_MINUTES', '10081'], ['LLM_RATE_LIMIT_GIVE_UP_MINUTES', 'for ever'],
      ['LLM_RATE_LIMIT_GIVE_UP_MINUTES', '1.5'],
    ]) {
      assert.throws(() => loadConfig({ LLM_BASE_URL: 'http://m/v1', LLM_MODEL: 'm', [name!]: value! }, '/x'), (e: Error) => e.message.startsWith(`${name} `));
    }
  });

  it("reads how long a query waits for one of the pool's PostgreSQL connections", () => {
    assert.equal(loadConfig({}, '/x').databasePoolWaitMs, 5_000);
    assert.equal(loadConfig({ DATABASE_POOL_WAIT_SECONDS: '30' }, '/x').databasePoolWaitMs, 30_000);
    for (const value of ['0', '301', '2.5', 'soon', '-1']) {
      assert.throws(() => loadConfig({ DATABASE_POOL_WAIT_SECONDS: value }, '/x'), (e: Error) => e.message.startsWith('DATABASE_POOL_WAIT_SECONDS '), value);
    }
  });

  it('reads which proxies to trust', () => {
    assert.equal(loadConfig({}, '/x').trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }, '/x').trustProxy, true);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }, '/x').trustProxy, ['10.0.0.0/8', '127.0.0.1']);
    assert.throws(() => loadConfig({ TRUST_PROXY: 'my proxy' }, '/x'), (e: Error) => e.message.startsWith('TRUST_PROXY '));
  });

  it('reads the host names the web UI answers under besides PUBLIC_URL\'s and loopback names', () => {
    assert.deepEqual(loadConfig({}, '/x').allowedHosts, []);
    assert.deepEqual(loadConfig({ ALLOWED_HOSTS: 'Leads.Internal, leadrun.example.com., 10.0.0.5,[fd00::5]' }, '/x').allowedHosts,
      ['leads.internal', 'leadrun.example.com', '10.0.0.5', '[fd00::5]']);
  });

  it('reads the mail settings: SMTP_URL, MAIL_FROM, SECRETS_KEY and ALLOW_PRIVATE_HOSTS with its older name', () => {
    const key = Buffer.alloc(32, 7);
    const config = loadConfig({
      SMTP_URL: 'smtps://u:p@mail.example.com:465', MAIL_FROM: 'Acme Sales <sales@acme.example>', SECRETS_KEY: key.toString('base64'),
    }, '/x');
    assert.equal(config.smtpUrl, 'smtps://u:p@mail.example.com:465');
    assert.deepEqual(config.mailFrom, { name: 'Acme Sales', address: 'sales@acme.example' });
    assert.deepEqual(config.secretsKey, key);
    assert.deepEqual(loadConfig({ SECRETS_KEY: key.toString('hex') }, '/x').secretsKey, key);
    assert.deepEqual(loadConfig({ MAIL_FROM: 'sales@acme.example' }, '/x').mailFrom, { name: null, address: 'sales@acme.example' });
    assert.equal(loadConfig({}, '/x').secretsKey, null);
    assert.equal(loadConfig({ ALLOW_PRIVATE_HOSTS: 'true' }, '/x').allowPrivateHosts, true);
    assert.equal(loadConfig({ RESEARCH_ALLOW_PRIVATE_HOSTS: 'true' }, '/x').allowPrivateHosts, true);
    assert.equal(loadConfig({ ALLOW_PRIVATE_HOSTS: 'false', RESEARCH_ALLOW_PRIVATE_HOSTS: 'true' }, '/x').allowPrivateHosts, false,
      'the new name wins');
    for (const [name, value] of [
      ['SMTP_URL', 'http://mail.example.com'], ['MAIL_FROM', 'Acme <not an address>'], ['MAIL_FROM', 'nobody'],
      ['SECRETS_KEY', 'c2hvcnQ='], ['SECRETS_KEY', 'z'.repeat(64)], ['ALLOW_PRIVATE_HOSTS', 'maybe'],
    ]) {
      assert.throws(() => loadConfig({ [name!]: value! }, '/x'), (e: Error) => e.message.startsWith(`${name} `), `${name}=${value}`);
    }
  });

  it('reads MAIL_REPLY_CHECK_SECONDS: 60 s unless set, from 1 s to an hour', () => {
    assert.equal(loadConfig({}, '/x').replyCheckIntervalMs, 60_000);
    assert.equal(loadConfig({ MAIL_REPLY_CHECK_SECONDS: '1' }, '/x').replyCheckIntervalMs, 1000);
    assert.equal(loadConfig({ MAIL_REPLY_CHECK_SECONDS: '3600' }, '/x').replyCheckIntervalMs, 3_600_000);
    for (const value of ['0', '3601', '1.5', '-5', 'soon']) {
      assert.throws(() => loadConfig({ MAIL_REPLY_CHECK_SECONDS: value }, '/x'), (e: Error) => e.message.startsWith('MAIL_REPLY_CHECK_SECONDS '), value);
    }
  });

  it('reads WEBHOOK_RETRY_SECONDS: the default schedule unless set, one wait per retry, each from 1 s to 7 days', () => {
    assert.equal(loadConfig({}, '/x').webhookRetryDelaysMs, null);
    assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SECONDS: '1' }, '/x').webhookRetryDelaysMs, [1000]);
    assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SECONDS: ' 5, 60 ,604800' }, '/x').webhookRetryDelaysMs, [5000, 60_000, 604_800_000]);
    for (const value of ['0', '1,0', '604801', '1.5', '-5', '5,,60', '5;60', 'soon', Array(21).fill('1').join(',')]) {
      assert.throws(() => loadConfig({ WEBHOOK_RETRY_SECONDS: value }, '/x'), (e: Error) => e.message.startsWith('WEBHOOK_RETRY_SECONDS '), value);
    }
  });

  it('treats an empty value as unset', () => {
    const config = loadConfig({ PORT: '', DATABASE_URL: '  ', FREE_PLAN_MONTHLY_RUNS: '' }, '/x');
    assert.equal(config.port, 3000);
    assert.equal(config.databaseUrl, null);
    assert.equal(config.freePlanMonthlyRuns, 100);
  });

  it('takes postgresql:// as well as postgres://', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).databaseUrl, 'postgresql://u@h/db');
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ FREE_PLAN_MONTHLY_RUNS: '-1' }, 'FREE_PLAN_MONTHLY_RUNS'],
    [{ FREE_PLAN_MONTHLY_RUNS: 'lots' }, 'FREE_PLAN_MONTHLY_RUNS'],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ PUBLIC_URL: 'ftp://example.com' }, 'PUBLIC_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TRACE_URL_TEMPLATE: 'https://trace.example.com/run' }, 'TRACE_URL_TEMPLATE'],
    [{ TRACE_URL_TEMPLATE: 'not a url {traceId}' }, 'TRACE_URL_TEMPLATE'],
    [{ LLM_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'LLM_MODEL'],
    [{ LLM_MODEL: 'llama3.1' }, 'LLM_BASE_URL'],
    [{ LLM_BASE_URL: 'localhost:11434', LLM_MODEL: 'llama3.1' }, 'LLM_BASE_URL'],
    [{ RESEARCH_ALLOW_PRIVATE_HOSTS: 'maybe' }, 'RESEARCH_ALLOW_PRIVATE_HOSTS'],
    [{ ALLOWED_HOSTS: 'https://leads.example.com' }, 'ALLOWED_HOSTS'],
    [{ ALLOWED_HOSTS: 'leads.example.com:8443' }, 'ALLOWED_HOSTS'],
    [{ ALLOWED_HOSTS: 'leads.example.com/ui' }, 'ALLOWED_HOSTS'],
    [{ ALLOWED_HOSTS: 'leads example' }, 'ALLOWED_HOSTS'],
  ];
  for (const [env, variable] of bad) {
    it(`refuses ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}, naming ${variable}`, () => {
      assert.throws(() => loadConfig(env, '/x'), (error: unknown) => {
        assert.ok(error instanceof ConfigError, `a ConfigError, not ${String(error)}`);
        assert.equal(error.variable, variable);
        assert.ok(error.message.includes(variable), error.message);
        assert.doesNotMatch(error.message, /\n/, 'one line');
        return true;
      });
    });
  }
});

describe('the program with a bad configuration', () => {
  it('PORT=abc leadrun serve exits non-zero with exactly one line that names PORT', async () => {
    const dataDir = await tempDir();
    try {
      const result = await runLeadrun(['serve'], { PORT: 'abc', DATA_DIR: dataDir.path }, { timeoutMs: 30_000 });
      assert.notEqual(result.code, 0);
      assert.equal(result.signal, null);
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      assert.equal(lines.length, 1, `stderr: ${result.stderr}`);
      assert.match(lines[0]!, /PORT/);
      assert.doesNotMatch(result.stderr, /^\s+at /m);
      assert.equal(result.stdout, '');
    } finally {
      await dataDir.remove();
    }
  });

  it('names the variable for the worker and the admin commands as well', async () => {
    for (const args of [['worker'], ['migrate'], ['workspace', 'create', '--name', 'x']]) {
      const result = await runLeadrun(args, { DATABASE_URL: 'mysql://db/leadrun' }, { timeoutMs: 30_000 });
      assert.notEqual(result.code, 0);
      assert.equal(result.stderr.trimEnd().split('\n').length, 1, `stderr: ${result.stderr}`);
      assert.match(result.stderr, /DATABASE_URL/);
    }
  });
});
