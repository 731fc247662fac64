// The offline engine's rules: its three steps as pure functions, read top to bottom in run order (analysis.ts,
// strategy.ts, writing.ts). A CPU pool thread loads this file (src/cpu/tasks.ts); it imports nothing of the pool.
import type { Engine, EngineResult } from '../../engine.ts';
import type { AnalysisOutput, StrategyOutput, WriterOutput } from '../../../schemas/outputs.ts';
import { analyseCall } from './analysis.ts';
import { chooseStrategy } from './strategy.ts';
import { writeDraft } from './writing.ts';

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
