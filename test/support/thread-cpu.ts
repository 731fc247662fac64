// How long work takes, measured in this thread's CPU time, not by the clock: the clock also counts the time the thread
// waited for a core while other test processes shared the machine, and waiting is not work. Tests that bound how the
// cost of reading hostile input grows measure with these.

/** Milliseconds of this thread's CPU that `work` took. */
export function threadCpuMs(work: () => unknown): number {
  return timedCpu(work).ms;
}

/** What `work` returns, and the milliseconds of this thread's CPU it took. */
export function timedCpu<T>(work: () => T): { value: T; ms: number } {
  const start = process.threadCpuUsage();
  const value = work();
  const used = process.threadCpuUsage(start);
  return { value, ms: (used.user + used.system) / 1000 };
}

/**
 * Milliseconds of this thread's CPU that one call of `run` takes, over calls repeated for at least `budgetMs` of it: the
 * repeats ride out the clock's ticks.
 */
export function cpuPerCall(run: () => unknown, budgetMs = 150): number {
  let calls = 0;
  let spent = 0;
  while (spent < budgetMs) {
    spent += threadCpuMs(run);
    calls += 1;
  }
  return spent / calls;
}
