// The built-in engine: deterministic rules, no network, no model (DESIGN §3, §12). Its three steps read top to
// bottom in run order: analysis.ts, strategy.ts, writing.ts; they run in the CPU pool (src/cpu/tasks.ts), never on
// the event loop, because they read a stranger's transcript.
import type { CpuPool } from '../../../cpu/pool.ts';
import { detached, type Engine, type EngineResult } from '../../engine.ts';
import type { AnalysisOutput, StrategyOutput, WriterOutput } from '../../outputs.ts';
import { analyseCall } from './analysis.ts';
import { chooseStrategy } from './strategy.ts';
import { writeDraft } from './writing.ts';

export { wordCount } from './feedback.ts';

type AnalyseContext = Parameters<Engine['analyse']>[0];
type StrategiseContext = Parameters<Engine['strategise']>[0];
type WriteContext = Parameters<Engine['write']>[0];

/** The version of these rules, recorded on every step they produce, as a prompt's version is for a model. */
export const OFFLINE_RULES_VERSION = 'offline-4';

const result = <T>(output: T): EngineResult<T> => ({ output, model: null, promptVersion: OFFLINE_RULES_VERSION, usage: null });

/** The rules, run where they are called: in a CPU pool thread (src/cpu/tasks.ts), or by tests of the rules. */
export const offlineRules = {
  analyse: (ctx: AnalyseContext): EngineResult<AnalysisOutput> => result(analyseCall(ctx)),
  strategise: (ctx: StrategiseContext): EngineResult<StrategyOutput> => result(chooseStrategy(ctx)),
  write: (ctx: WriteContext): EngineResult<WriterOutput> => result(writeDraft(ctx)),
};

/** The offline engine: its rules read a stranger's transcript, so they run in the CPU pool, never on the event loop. */
export function createOfflineEngine(cpu: CpuPool): Engine {
  return {
    name: 'offline',
    analyse: (ctx) => cpu.run('analyse', detached(ctx), { signal: ctx.signal }),
    strategise: (ctx) => cpu.run('strategise', detached(ctx), { signal: ctx.signal }),
    write: (ctx) => cpu.run('write', detached(ctx), { signal: ctx.signal }),
  };
}
