// The model workload of `npm run bench -- --only model`: runs bound by the model provider. A loopback
// OpenAI-compatible endpoint answers each call after a model's latency (2 s); `leadrun serve` with its worker works
// N runs with LLM_MAX_CONCURRENCY=K. Two variants, each on a database of its own:
//
//   uncapped  the bound is K calls in flight, each taking the latency, 3 calls a run: K / latency / 3 runs a second;
//   capped    the endpoint also refuses beyond 600 requests a minute (429 + Retry-After), enforced as providers do,
//             continuously (a bucket of 10 requests refilled at 10 a second): the bound is 600 / 3 = 200 runs a minute.
//
// Each reports runs a minute against its bound, leadrun's CPU in cores (serve's CPU time over the wall time: it
// works the runs and answered the starts), runs FAILED, and the steps put off or retried against the 429s.
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { answer } from '../test/support/model-answers.ts';
import { chat, startOpenAIServer, type OpenAIServer } from '../test/support/openai-server.ts';
import { cpuMs, startServe } from './processes.ts';
import { createBenchDatabase, prospects, seed } from './seed.ts';

export interface ModelOptions {
  /** Runs each variant works. */
  runs: number;
  /** LLM_MAX_CONCURRENCY. */
  concurrency: number;
  /** How long the endpoint takes to answer a call. */
  latencyMs: number;
  /** The capped variant's requests a minute. */
  capPerMinute: number;
  siteUrl: string;
  env: Record<string, string | undefined>;
  log: (line: string) => void;
}

export interface ModelFigures {
  variant: 'uncapped' | 'capped';
  runs: number;
  finished: number;
  failed: number;
  seconds: number;
  runsPerMinute: number;
  boundPerMinute: number;
  /** runsPerMinute / boundPerMinute. */
  ofBound: number;
  /** serve's CPU time over the wall time, in cores. */
  leadrunCores: number;
  calls: number;
  /** Calls the endpoint refused with 429. */
  refused: number;
  /** Steps put off or retried (step.retrying events). */
  retriedSteps: number;
  mostInFlight: number;
}

const CALLS_PER_RUN = 3;
const RUNS_PER_BATCH = 100;

/**
 * The bench's company sites (bench/sites.ts) are not the tests' company: the WRITER's draft here holds nothing but
 * what the call said, so the grounding guard keeps it and a run takes exactly three calls.
 */
const benchAnswer: typeof answer = (request) => request.body?.response_format?.json_schema?.name === 'writer'
  ? chat({
    subject: 'A shorter month-end close',
    body: 'Hi,\n\nThank you for the call. You said month-end reporting takes four days and the team is exhausted.\n\n'
      + 'Would a pilot with your finance team next week suit you?\n\nBest,\nSam',
  }, { usage: { prompt_tokens: 400, completion_tokens: 100 } })
  : answer(request);

async function variant(options: ModelOptions, name: ModelFigures['variant']): Promise<ModelFigures> {
  const { log } = options;
  const perSecond = options.capPerMinute / 60;
  const llm: OpenAIServer = await startOpenAIServer({
    delayMs: options.latencyMs,
    ...(name === 'capped' ? { rateLimit: { requests: perSecond, windowMs: 1_000 } } : {}),
  });
  llm.setDefault(benchAnswer);
  const created = await createBenchDatabase();
  try {
    const workspaces = Math.ceil(options.runs / RUNS_PER_BATCH);
    const database = await openDatabase({ databaseUrl: created.url });
    let batches: Array<{ key: string; runs: Array<{ leadId: string; callId: string }> }>;
    try {
      await database.migrate();
      const seeded = await seed(database.db, { workspaces, leadsPerWorkspace: RUNS_PER_BATCH, siteUrl: options.siteUrl });
      const byWorkspace = await prospects(database.db, RUNS_PER_BATCH);
      let left = options.runs;
      batches = seeded.workspaces.map((w) => {
        const runs = (byWorkspace.get(w.id) ?? []).slice(0, Math.min(RUNS_PER_BATCH, left));
        left -= runs.length;
        return { key: w.key, runs };
      });
    } finally {
      await database.close();
    }

    const boundPerMinute = name === 'capped'
      ? Math.min(options.capPerMinute, (options.concurrency * 60_000) / options.latencyMs) / CALLS_PER_RUN
      : (options.concurrency * 60_000) / options.latencyMs / CALLS_PER_RUN;
    log(`model-bound runs (${name}): ${options.runs} runs, LLM_MAX_CONCURRENCY=${options.concurrency}, ${options.latencyMs} ms a call`
      + `${name === 'capped' ? `, ${options.capPerMinute} requests a minute` : ''}; bound ${boundPerMinute.toFixed(0)} runs/min`);
    const serve = await startServe({
      env: { ...options.env, DATABASE_URL: created.url, LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'bench-model', LLM_MAX_CONCURRENCY: String(options.concurrency) },
      worker: true,
    });
    const monitor = new pg.Client({ connectionString: created.url });
    let cpu = 0;
    let wallMs = 0;
    try {
      await monitor.connect();
      const cpuBefore = cpuMs(serve.pid);
      const began = performance.now();
      for (const batch of batches) {
        const res = await fetch(`${serve.url}/api/v1/runs/batch`, {
          method: 'POST', headers: { authorization: `Bearer ${batch.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ runs: batch.runs }),
        });
        if (res.status !== 202) throw new Error(`POST /api/v1/runs/batch answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      }
      // Twice the bound's time, and a minute more, before giving up.
      const deadline = Date.now() + 60_000 + (2 * options.runs * 60_000) / boundPerMinute;
      for (;;) {
        const { rows } = await monitor.query<{ open: string }>(`SELECT count(*) AS open FROM runs WHERE status IN ('QUEUED', 'RUNNING')`);
        if (Number(rows[0]?.open) === 0) break;
        if (Date.now() > deadline) throw new Error(`runs still open after the deadline: ${rows[0]?.open}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      wallMs = performance.now() - began;
      cpu = cpuMs(serve.pid) - cpuBefore;
    } finally {
      await monitor.end().catch(() => {});
      await serve.stop();
    }

    const reader = await openDatabase({ databaseUrl: created.url });
    try {
      const outcome = await runOutcome(reader.db);
      const figures: ModelFigures = {
        variant: name,
        runs: outcome.runs,
        finished: outcome.finished,
        failed: outcome.failed,
        seconds: outcome.seconds,
        runsPerMinute: (outcome.finished * 60) / outcome.seconds,
        boundPerMinute,
        ofBound: (outcome.finished * 60) / outcome.seconds / boundPerMinute,
        leadrunCores: cpu / wallMs,
        calls: llm.requests.length,
        refused: llm.refusedAt.length,
        retriedSteps: outcome.retriedSteps,
        mostInFlight: llm.maxInFlight,
      };
      log(`  ${figures.finished}/${figures.runs} runs AWAITING_APPROVAL, ${figures.failed} FAILED, in ${figures.seconds.toFixed(1)} s: `
        + `${figures.runsPerMinute.toFixed(0)} runs/min = ${(figures.ofBound * 100).toFixed(0)} % of the bound; leadrun CPU ${figures.leadrunCores.toFixed(2)} cores; `
        + `${figures.calls} calls (${(figures.calls / Math.max(1, figures.runs)).toFixed(2)} a run), ${figures.refused} refused with 429, `
        + `${figures.retriedSteps} steps put off or retried; at most ${figures.mostInFlight} calls in flight`);
      return figures;
    } finally {
      await reader.close();
    }
  } finally {
    await llm.close();
    await created.drop();
  }
}

/** From the first run queued to the last one done; the steps put off or retried. */
async function runOutcome(db: Kysely<DB>) {
  const { rows: [row] } = await sql<{ runs: number; finished: number; failed: number; seconds: number; retried: number }>`
    SELECT count(*)::int AS runs,
           count(*) FILTER (WHERE status = 'AWAITING_APPROVAL')::int AS finished,
           count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
           extract(epoch FROM max(completed_at) - min(started_at))::float8 AS seconds,
           (SELECT count(*) FROM run_events WHERE type = 'step.retrying')::int AS retried
    FROM runs`.execute(db);
  return { runs: row!.runs, finished: row!.finished, failed: row!.failed, seconds: row!.seconds, retriedSteps: row!.retried };
}

export async function modelWorkload(options: ModelOptions): Promise<ModelFigures[]> {
  return [await variant(options, 'uncapped'), await variant(options, 'capped')];
}

export function formatModel(figures: ModelFigures[]): string[] {
  const f = (n: number, digits = 0) => n.toFixed(digits);
  return [
    '| model-bound runs | runs/min | bound runs/min | of the bound | leadrun CPU cores | FAILED | calls | 429s | steps put off or retried | most calls in flight |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...figures.map((m) => `| ${m.finished}/${m.runs} runs, ${m.variant} | ${f(m.runsPerMinute)} | ${f(m.boundPerMinute)} | ${f(m.ofBound * 100)} % | `
      + `${f(m.leadrunCores, 2)} | ${m.failed} | ${m.calls} | ${m.refused} | ${m.retriedSteps} | ${m.mostInFlight} |`),
  ];
}
