// Idle slots of a job runner, asleep until a NOTIFY says there is work or their poll comes round. A
// notice wakes as many as it has work for, not all of them to race for one row; stopping wakes them all.
export class Sleepers {
  readonly #waiting = new Set<() => void>();

  /** Resolves after `ms`, or sooner when woken. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiting = this.#waiting;
      const timer = setTimeout(done, ms);
      // A slot that woke by itself leaves the set, so that a notice goes to a slot that is still asleep.
      function done() { clearTimeout(timer); waiting.delete(done); resolve(); }
      waiting.add(done);
    });
  }

  /** How many slots are asleep. */
  get count(): number {
    return this.#waiting.size;
  }

  /** Wakes up to `count` sleeping slots. */
  wake(count = 1): void {
    for (const wake of [...this.#waiting].slice(0, count)) wake();
  }

  wakeAll(): void {
    for (const wake of [...this.#waiting]) wake();
  }
}
