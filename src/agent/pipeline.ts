// The pipeline: four steps, in run order. Each step reads the run context (the lead, the call and the outputs of
// the steps before it) and returns its output with what it took; the worker stores each as the step completes.
import type { CpuPool } from '../cpu/pool.ts';
import { detached, type Engine, type EngineResult, type RunContext } from './engine.ts';
import { writeGroundedDraft } from './checked-writing.ts';
import type { AnalysisOutput, ResearchOutput, StepNode, StrategyOutput } from '../schemas/outputs.ts';
import { quotesOf } from './prompts/brief.ts';
import { research } from './research.ts';
import { restoreSeparator } from './sign-off.ts';
import type { fetchPage } from './website.ts';

/** The version of the research rules (pages chosen, facts kept), recorded on every RESEARCH step. */
export const RESEARCH_VERSION = 'research-1';

export interface PipelineDeps {
  engine: Engine;
  /** Where the CPU work over untrusted input runs: page reading and the draft's checks (DESIGN §10). */
  cpu: CpuPool;
  allowPrivateHosts: boolean;
  /** Replaces the website fetch (tests). */
  fetchPage?: typeof fetchPage;
}

export interface PipelineStep {
  node: StepNode;
  run(ctx: RunContext, deps: PipelineDeps): Promise<EngineResult<object>>;
  /** Puts the step's stored output back into the context, for the steps after it. */
  remember(ctx: RunContext, output: unknown): void;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is missing from the run context`);
  return value;
}

export const PIPELINE: readonly PipelineStep[] = [
  {
    node: 'RESEARCH',
    run: async (ctx, deps) => ({
      output: await research(ctx, { cpu: deps.cpu, allowPrivateHosts: deps.allowPrivateHosts, engine: deps.engine.name, ...(deps.fetchPage ? { fetchPage: deps.fetchPage } : {}) }),
      model: null,
      promptVersion: RESEARCH_VERSION,
      usage: null,
    }),
    remember: (ctx, output) => { ctx.research = output as ResearchOutput; },
  },
  {
    node: 'ANALYSIS',
    run: (ctx, deps) => deps.engine.analyse({ ...ctx, research: need(ctx.research, 'RESEARCH') }),
    remember: (ctx, output) => { ctx.analysis = output as AnalysisOutput; },
  },
  {
    node: 'STRATEGY',
    run: (ctx, deps) => deps.engine.strategise({ ...ctx, research: need(ctx.research, 'RESEARCH'), analysis: need(ctx.analysis, 'ANALYSIS') }),
    remember: (ctx, output) => { ctx.strategy = output as StrategyOutput; },
  },
  {
    node: 'WRITER',
    // Any engine's draft is checked (draft-checks.ts): written once more if it claims what the run never found, or,
    // from a model, if it fails any check.
    run: async (ctx, deps) => {
      const analysis = need(ctx.analysis, 'ANALYSIS');
      // The model's brief gives each quote's transcript line: looked up in the CPU pool, as a stranger's text is read.
      const quoteLines = deps.engine.name === 'model'
        ? await deps.cpu.run('quoteLines', { transcript: ctx.call.transcript, quotes: quotesOf(analysis) }, { signal: ctx.signal })
        : undefined;
      const result = await writeGroundedDraft(
        deps.engine,
        { ...ctx, research: need(ctx.research, 'RESEARCH'), analysis, strategy: need(ctx.strategy, 'STRATEGY'), ...(quoteLines ? { quoteLines } : {}) },
        (draft, checked) => deps.cpu.run('checkDraft', { draft, ctx: detached(checked) }, { signal: checked.signal }),
      );
      // The guard's tidy-up strips trailing spaces, the one of the signature's `-- ` line too (src/agent/sign-off.ts).
      return { ...result, output: { ...result.output, body: restoreSeparator(result.output.body) } };
    },
    remember: () => {},
  },
];
