// The pipeline: four steps, in run order. Each step reads the run context (the lead, the call and the outputs of
// the steps before it) and returns its output; the worker stores every output as the step completes.
import type { Engine, RunContext } from './engine.ts';
import type { AnalysisOutput, ResearchOutput, StepNode, StrategyOutput } from './outputs.ts';
import { research } from './research.ts';
import type { fetchPage } from './website.ts';

export interface PipelineDeps {
  engine: Engine;
  allowPrivateHosts: boolean;
  /** Replaces the website fetch (tests). */
  fetchPage?: typeof fetchPage;
}

export interface PipelineStep {
  node: StepNode;
  run(ctx: RunContext, deps: PipelineDeps): Promise<object>;
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
    run: (ctx, deps) => research(ctx, { allowPrivateHosts: deps.allowPrivateHosts, engine: deps.engine.name, ...(deps.fetchPage ? { fetchPage: deps.fetchPage } : {}) }),
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
    run: (ctx, deps) => deps.engine.write({
      ...ctx, research: need(ctx.research, 'RESEARCH'), analysis: need(ctx.analysis, 'ANALYSIS'), strategy: need(ctx.strategy, 'STRATEGY'),
    }),
    remember: () => {},
  },
];
