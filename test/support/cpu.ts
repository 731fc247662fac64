// One CPU pool per test process, the real thing: the tests' runs read pages and apply the offline rules in worker
// threads as the server does. Idle threads do not keep the process alive.
import type { Engine } from '../../src/agent/engine.ts';
import { createOfflineEngine } from '../../src/agent/engines/offline.ts';
import { createCpuPool, type CpuPool } from '../../src/cpu/pool.ts';

let pool: CpuPool | null = null;
let engine: Engine | null = null;

export function testCpu(): CpuPool {
  pool ??= createCpuPool({ budgetMs: 60_000, threads: 2 });
  return pool;
}

/** The offline engine on the test process's pool. */
export function testOfflineEngine(): Engine {
  engine ??= createOfflineEngine(testCpu());
  return engine;
}
