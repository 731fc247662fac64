// WRITER for follow-ups (DESIGN §13) and for the answer to a buyer's reply (§16): touch n of a sequence, written from
// the call, the research and the earlier touches of the thread, held to §12's rules and to at most 100 words. The
// offline writer is what every installation without a model gets; with a model (`options.model`), the model writes
// it (model.ts) and its answer passes the same checks, else the offline writer's draft is used.
import type { Engine, TokenUsage } from '../engine.ts';
import { version as followUpPromptVersion } from '../prompts/follow-up.ts';
import { offlineRules } from '../engines/offline/rules.ts';
import type { ModelEngineOptions } from '../engines/model.ts';
import type { CpuPool } from '../../cpu/pool.ts';
import type { AnalysisOutput, ResearchOutput, StrategyOutput } from '../../schemas/outputs.ts';
import { contextOf } from './checks.ts';
import type { FollowUpDraft, FollowUpInput, FollowUpWork } from './types.ts';

export type { FollowUpBriefing, FollowUpDraft, FollowUpInput, FollowUpWork, WrittenBy } from './types.ts';
export { contextOf, FOLLOW_UP_WORDS } from './checks.ts';
export { threadSubject } from './draft.ts';
export { REPLY_ANSWER_WORDS } from './reply.ts';

export interface FollowUpOptions {
  /** The installation's engine: ANALYSIS and STRATEGY are asked of it when the input has none. */
  engine?: Engine;
  signal?: AbortSignal;
  /** The model to write through (the LLM_* settings, as createModelEngine takes them); none: the offline writer. */
  model?: ModelEngineOptions;
  /** Where the work on the transcript, the thread and the reply runs (work.ts); none: in place. */
  cpu?: CpuPool;
}

/** The version of the offline follow-up rules, recorded as a prompt's version is. */
export const FOLLOW_UP_RULES_VERSION = 'follow-up-offline-1';

/** An instruction is at most 500 characters (§13); a longer one is read this far. */
const INSTRUCTION_MAX = 500;

async function workOf(options: FollowUpOptions): Promise<FollowUpWork> {
  const { cpu, signal } = options;
  if (cpu) {
    return {
      write: (input) => cpu.run('writeFollowUpOffline', input, { signal }),
      brief: (input) => cpu.run('briefFollowUp', input, { signal }),
      check: (job) => cpu.run('checkFollowUpDraft', job, { signal }),
    };
  }
  const work = await import('./work.ts');
  return {
    write: async (input) => work.writeFollowUpOffline(input),
    brief: async (input) => work.briefFollowUp(input),
    check: async (job) => work.checkFollowUpDraft(job),
  };
}

/** The follow-up (or the answer to the reply) for this touch. */
export async function writeFollowUp(input: FollowUpInput, options: FollowUpOptions = {}): Promise<FollowUpDraft> {
  const full = await withSteps(input, options);
  const work = await workOf(options);
  let usage: TokenUsage | null = null;
  if (options.model) {
    const { writeWithModel } = await import('./model.ts');
    const written = await writeWithModel(full, options.model, work, options.signal);
    if (written.draft) return { ...written.draft, writtenBy: { engine: 'model', model: written.model, promptVersion: followUpPromptVersion, usage: written.usage } };
    // The model's answer was no usable follow-up: the offline writer's is kept, and the tokens spent still count.
    usage = written.usage;
  }
  options.signal?.throwIfAborted();
  const draft = await work.write(full);
  return { ...draft, writtenBy: { engine: 'offline', model: null, promptVersion: FOLLOW_UP_RULES_VERSION, usage } };
}

/** The input with ANALYSIS and STRATEGY, asked of the engine (or the offline rules) when the caller had none. */
async function withSteps(input: FollowUpInput, options: FollowUpOptions): Promise<FollowUpInput & { research: ResearchOutput; analysis: AnalysisOutput; strategy: StrategyOutput }> {
  const research: ResearchOutput = input.research ?? {
    engine: 'offline', website: { url: input.lead.companyWebsite, fetched: false, status: null, error: null, title: null, description: null, summary: null }, facts: [], sources: [],
  };
  const ctx = contextOf({ ...input, research });
  const analysis = input.analysis ?? (options.engine ? (await options.engine.analyse({ ...ctx, research })).output : offlineRules.analyse({ ...ctx, research }).output);
  const strategy = input.strategy ?? (options.engine
    ? (await options.engine.strategise({ ...ctx, research, analysis })).output
    : offlineRules.strategise({ ...ctx, research, analysis }).output);
  return { ...input, instruction: input.instruction.slice(0, INSTRUCTION_MAX), research, analysis, strategy };
}

