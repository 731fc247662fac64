// Tells waiting event streams that their run's log grew. One LISTEN per process feeds every stream.
import type { Database } from '../db/database.ts';
import { RUN_EVENTS_CHANNEL } from '../domain/run-events.ts';

export class RunEventHub {
  readonly #waiters = new Map<string, Set<() => void>>();
  #stop: (() => Promise<void>) | null = null;
  #closed = false;

  /** True once the process is shutting down: streams end, and clients resume elsewhere with Last-Event-ID. */
  get closed(): boolean {
    return this.#closed;
  }

  async start(database: Database): Promise<void> {
    this.#stop = await database.listen(RUN_EVENTS_CHANNEL, (runId) => {
      for (const wake of this.#waiters.get(runId) ?? []) wake();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#stop?.();
    for (const waiters of this.#waiters.values()) for (const wake of waiters) wake();
  }

  /**
   * Watches a run: `changed()` says whether its log grew since the last `reset()`, and `next(ms)` waits for that
   * (or for `ms`). Watch before reading, so that nothing written between a read and a wait is missed.
   */
  watch(runId: string) {
    let grew = false;
    let wake: (() => void) | null = null;
    const onEvent = () => {
      grew = true;
      wake?.();
    };
    let waiters = this.#waiters.get(runId);
    if (!waiters) {
      waiters = new Set();
      this.#waiters.set(runId, waiters);
    }
    waiters.add(onEvent);
    return {
      reset: () => { grew = false; },
      changed: () => grew,
      next: (ms: number) => new Promise<void>((resolve) => {
        if (grew || this.#closed) return resolve();
        const timer = setTimeout(done, ms);
        function done() { clearTimeout(timer); wake = null; resolve(); }
        wake = done;
      }),
      stop: () => {
        wake?.();
        waiters.delete(onEvent);
        if (waiters.size === 0) this.#waiters.delete(runId);
      },
    };
  }
}
