// The built-in engine: deterministic rules, no network, no model (DESIGN §3, §12). The rules (rules.ts) run in the
// CPU pool (src/cpu/tasks.ts), never on the event loop, because they read a stranger's transcript.
import type { CpuPool } from '../../../cpu/pool.ts';
import { detached, type Engine } from '../../engine.ts';

export { wordCount } from './feedback.ts';
export { OFFLINE_RULES_VERSION, offlineRules } from './rules.ts';

/** The offline engine: its rules read a stranger's transcript, so they run in the CPU pool, never on the event loop. */
export function createOfflineEngine(cpu: CpuPool): Engine {
  return {
    name: 'offline',
    analyse: (ctx) => cpu.run('analyse', detached(ctx), { signal: ctx.signal }),
    strategise: (ctx) => cpu.run('strategise', detached(ctx), { signal: ctx.signal }),
    write: (ctx) => cpu.run('write', detached(ctx), { signal: ctx.signal }),
  };
}
