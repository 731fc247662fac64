// Every job kind, in one place (DESIGN §9): its handler, how many of its jobs one process works at once, its lease
// and its RetryPolicy. The runner (runner.ts) works whatever this answers; `leadrun worker` and `serve` register it.
//
//   kind              rows          slots                       retries
//   run               runs          WORKER_CONCURRENCY (or the  per step: 3 attempts, exponential from
//                                   model's call limit)         STEP_RETRY_BASE_MS, or the endpoint's Retry-After
//   email.deliver     jobs          2                           6 attempts: 30 s, 2 min, 10 min, 30 min, 2 h
//   mail.check_replies jobs         2                           100 attempts, doubling from 1 min to 15 min
//   webhook.deliver   jobs (lanes)  4                           7 attempts: 5 s, 1 min, 10 min, 1 h, 6 h, 24 h
//                                                               (WEBHOOK_RETRY_SECONDS sets them)
//   jobs.prune        jobs          1                           5 attempts, doubling from 1 min
//   sequences.tick    jobs          1                           100 attempts, doubling from 1 min (every minute: the
//                                                               follow-up scheduler, src/domain/sequences/scheduler.ts)
import type { Engine } from '../agent/engine.ts';
import type { ModelEngineOptions } from '../agent/engines/model.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../observability/metrics.ts';
import { replyCheckHandler } from '../mail/replies.ts';
import { deliveryHandler } from './handlers/email-deliver.ts';
import { pruneHandler } from './handlers/prune.ts';
import { touchTickHandler } from './handlers/touch-tick.ts';
import { runHandler } from './handlers/run.ts';
import { webhookHandler } from './handlers/webhook-deliver.ts';
import type { JobHandler, SourcedJobHandler } from './types.ts';

export interface JobKindsOptions {
  config: Config;
  engine: Engine;
  /** The model follow-ups are written through (the LLM_* settings, as the engine was made from them); none: offline. */
  model?: ModelEngineOptions | null;
  metrics?: Metrics;
  /** Runs one process works at a time. */
  runSlots: number;
}

export function jobKinds({ config, engine, model, metrics, runSlots }: JobKindsOptions): Array<JobHandler | SourcedJobHandler<{ id: string }>> {
  return [
    runHandler({
      engine,
      ...(metrics ? { metrics } : {}),
      concurrency: runSlots,
      leaseMs: config.runLeaseMs,
      retryBaseMs: config.stepRetryBaseMs,
      tokenBudget: config.runTokenBudget,
      requestModel: config.llm?.model ?? null,
      allowPrivateHosts: config.allowPrivateHosts,
      ...(config.llm ? { giveUpAfterMs: config.llm.giveUpAfterMs } : {}),
    }),
    deliveryHandler({ leaseMs: config.runLeaseMs, concurrency: 2 }),
    replyCheckHandler,
    webhookHandler({ leaseMs: config.runLeaseMs, concurrency: 4, retryDelaysMs: config.webhookRetryDelaysMs ?? undefined }),
    pruneHandler,
    touchTickHandler({ leaseMs: config.runLeaseMs, engine, ...(model ? { model } : {}) }),
  ];
}
