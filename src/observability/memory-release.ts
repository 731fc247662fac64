// Gives the system back the memory a burst of work left behind, once the process has gone quiet.
//
// V8 keeps the heap pages a burst of allocation made it take (a minute of reads: about 200 MiB beyond a live heap of
// 45 MiB), pooled for reuse, until its memory reducer releases them; the reducer waits for a low allocation rate,
// which it measures at each collection, and a server that goes quiet after the burst collects no more, so it goes on
// judging it busy and the pages stay. A last-resort collection, the one V8 runs on a low-memory warning, returns
// them: here it runs once the event loop has been quiet for a whole interval after a busy one.
// It needs node's --expose-gc (bin/leadrun passes it); without it, nothing is done.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** A share of the event loop's time spent running code, over one interval. */
const BUSY = 0.05;
const QUIET = 0.01;

export interface MemoryRelease {
  stop(): void;
}

/** A function that gives the share of the event loop's time spent running code since it was last called. */
function loopUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

export function releaseMemoryWhenQuiet(intervalMs = 5_000, gc = globalThis.gc, measure = loopUtilization()): MemoryRelease {
  if (!gc) return { stop: () => {} };
  // Starting up counts as busy: what it allocated is handed back at the first quiet interval.
  let busySinceRelease = true;
  const timer = setInterval(() => {
    const utilization = measure();
    if (utilization >= BUSY) busySinceRelease = true;
    else if (utilization < QUIET && busySinceRelease) {
      busySinceRelease = false;
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
