// Prometheus metrics of one process, served at /metrics. Each app has its own registry, so tests stay apart.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JobKindStats } from '../jobs/types.ts';

export class Metrics {
  readonly registry = new Registry();
  readonly #requests: Histogram<'method' | 'route' | 'status'>;
  readonly runsStarted: Counter;
  readonly stepsFinished: Counter<'node' | 'outcome'>;
  readonly runsFinished: Counter<'status'>;
  /** Job attempts of this process's runner by kind and outcome (done, retried, dead): the failures per kind. */
  readonly jobsFinished: Counter<'kind' | 'outcome'>;
  readonly #jobDepth: Gauge<'kind'>;
  readonly #jobOldestAge: Gauge<'kind'>;
  readonly #jobDead: Gauge<'kind'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'leadrun_' });
    this.#requests = new Histogram({
      name: 'leadrun_http_request_duration_seconds',
      help: 'HTTP requests by route and status, with their duration.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.runsStarted = new Counter({ name: 'leadrun_runs_started_total', help: 'Runs a worker of this process began or resumed.', registers: [this.registry] });
    this.stepsFinished = new Counter({
      name: 'leadrun_steps_total', help: 'Step attempts by node and outcome (completed, retried, deferred: put off while the model endpoint asked to wait, failed).', labelNames: ['node', 'outcome'], registers: [this.registry],
    });
    this.runsFinished = new Counter({ name: 'leadrun_runs_finished_total', help: 'Runs whose pipeline ended, by status.', labelNames: ['status'], registers: [this.registry] });
    this.jobsFinished = new Counter({
      name: 'leadrun_jobs_total', help: 'Job attempts by kind and outcome (done, retried, dead).', labelNames: ['kind', 'outcome'], registers: [this.registry],
    });
    this.#jobDepth = new Gauge({ name: 'leadrun_jobs_queued', help: 'Jobs waiting or running, by kind (the whole installation).', labelNames: ['kind'], registers: [this.registry] });
    this.#jobOldestAge = new Gauge({
      name: 'leadrun_jobs_oldest_age_seconds', help: 'How long the oldest due job of a kind has waited.', labelNames: ['kind'], registers: [this.registry],
    });
    this.#jobDead = new Gauge({
      name: 'leadrun_jobs_dead', help: 'Jobs that failed for good, by kind (the whole installation; FAILED runs for `run`).', labelNames: ['kind'],
      registers: [this.registry],
    });
  }

  /** The queue as the database holds it, read when /metrics is scraped. */
  observeJobs(stats: JobKindStats[]): void {
    this.#jobDepth.reset();
    this.#jobOldestAge.reset();
    this.#jobDead.reset();
    for (const kind of stats) {
      this.#jobDepth.set({ kind: kind.kind }, kind.depth);
      this.#jobOldestAge.set({ kind: kind.kind }, kind.oldestAgeSeconds);
      this.#jobDead.set({ kind: kind.kind }, kind.dead);
    }
  }

  observeRequest(request: FastifyRequest, reply: FastifyReply): void {
    // The route pattern, not the URL: ids would make every request its own series.
    const route = request.routeOptions.url ?? 'unmatched';
    this.#requests.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  }
}
