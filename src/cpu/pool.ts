// The CPU pool: the pipeline's CPU work over untrusted input (a stranger's HTML, a transcript, a model's draft)
// runs in worker threads, never on the event loop that answers HTTP (DESIGN §10). Each task has a time budget
// that starts when a thread begins it (time spent waiting in the queue does not count); a task over its budget,
// or over its memory limit, has its thread ended and fails with CpuBudgetExceeded, and the pool starts a fresh
// thread for the next task.
import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { TaskEnvelope, Tasks } from './tasks.ts';

export type TaskName = keyof Tasks;
export type TaskInput<K extends TaskName> = Parameters<Tasks[K]>[0];
export type TaskOutput<K extends TaskName> = ReturnType<Tasks[K]>;

export class CpuBudgetExceeded extends Error {
  readonly task: TaskName;
  readonly limit: 'time' | 'memory';
  constructor(task: TaskName, limit: 'time' | 'memory', budgetMs: number) {
    super(limit === 'time'
      ? `the work took longer than its CPU budget of ${formatMs(budgetMs)} (CPU_BUDGET_MS) and was stopped`
      : 'the work needed more memory than its limit and was stopped');
    this.name = 'CpuBudgetExceeded';
    this.task = task;
    this.limit = limit;
  }
}

export interface RunOptions {
  /** A cancelled run, a lost lease: stops the task at once, ending its thread. */
  signal?: AbortSignal;
  /**
   * Memory of the input handed to the thread rather than copied to it (a large file's bytes): the caller's views of it
   * are empty from then on.
   */
  transfer?: ArrayBuffer[];
}

export interface CpuPool {
  /** Runs one task in a thread. */
  run<K extends TaskName>(task: K, input: TaskInput<K>, options?: RunOptions): Promise<TaskOutput<K>>;
  readonly budgetMs: number;
  /** Waits for the tasks in progress and ends the threads. */
  close(): Promise<void>;
}

export interface CpuPoolOptions {
  /** Time one task may take once a thread has begun it. */
  budgetMs: number;
  /** Threads at most; by default defaultThreadCount(true). */
  threads?: number;
  /** Heap a thread may use before it is ended. */
  memoryMb?: number;
}

/**
 * One thread per core (up to 8); one fewer (one at least) in a process that answers HTTP, so that a core stays
 * with its event loop while the threads chew on hostile input.
 */
export function defaultThreadCount(servesHttp: boolean): number {
  return Math.max(1, Math.min(8, availableParallelism() - (servesHttp ? 1 : 0)));
}

export function createCpuPool(options: CpuPoolOptions): CpuPool {
  // Piscina itself is loaded by the first task: a server that reads no website and no file does without it.
  let piscina: Promise<Piscina<TaskEnvelope, unknown>> | null = null;
  const threads = () => (piscina ??= import('piscina').then(({ Piscina }) => new Piscina<TaskEnvelope, unknown>({
    filename: new URL('./tasks.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: options.threads ?? defaultThreadCount(true),
    // An idle thread is let go after a while: a server that reads no website holds no thread.
    idleTimeout: 30_000,
    resourceLimits: { maxOldGenerationSizeMb: options.memoryMb ?? 256 },
  })));

  async function run<K extends TaskName>(task: K, input: TaskInput<K>, { signal, transfer = [] }: RunOptions = {}): Promise<TaskOutput<K>> {
    signal?.throwIfAborted();
    const budget = new AbortController();
    const stop = signal ? AbortSignal.any([signal, budget.signal]) : budget.signal;
    const { port1, port2 } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    port1.once('message', () => {
      timer = setTimeout(() => budget.abort(), options.budgetMs);
    });
    try {
      const envelope: TaskEnvelope = { task, input, started: port2 };
      return (await (await threads()).run(envelope, { signal: stop, transferList: [port2, ...transfer] })) as TaskOutput<K>;
    } catch (error) {
      if (budget.signal.aborted) throw new CpuBudgetExceeded(task, 'time', options.budgetMs);
      if (signal?.aborted) throw signal.reason;
      if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw new CpuBudgetExceeded(task, 'memory', options.budgetMs);
      throw error;
    } finally {
      clearTimeout(timer);
      port1.close();
    }
  }

  return {
    run,
    budgetMs: options.budgetMs,
    // A pool no task used is made here (it starts no thread), so that a task after close fails as it would anyway.
    close: async () => (await threads()).close(),
  };
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
