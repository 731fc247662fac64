// What a pipeline step knows about the run, and the interface every engine implements.
import type { AnalysisOutput, ResearchOutput, StrategyOutput, WriterOutput } from './outputs.ts';

export interface LeadFacts {
  id: string;
  name: string;
  email: string | null;
  companyName: string | null;
  companyWebsite: string | null;
}

export interface CallFacts {
  id: string;
  title: string | null;
  transcript: string;
  occurredAt: Date | null;
}

/** Everything a step may read: the lead, the call, and the outputs of the steps before it. */
export interface RunContext {
  runId: string;
  lead: LeadFacts;
  call: CallFacts;
  /** Name of the person the e-mail is signed by (the workspace admin the run is attributed to). */
  senderName: string | null;
  research?: ResearchOutput;
  analysis?: AnalysisOutput;
  strategy?: StrategyOutput;
  /** A reviewer's feedback on an earlier draft, when WRITER runs again. */
  feedback?: string | null;
  signal?: AbortSignal;
}

export type EngineName = 'offline' | 'model';

/** ANALYSIS, STRATEGY and WRITER go through an engine; RESEARCH is the same for every engine. */
export interface Engine {
  readonly name: EngineName;
  analyse(ctx: RunContext & { research: ResearchOutput }): Promise<AnalysisOutput>;
  strategise(ctx: RunContext & { research: ResearchOutput; analysis: AnalysisOutput }): Promise<StrategyOutput>;
  write(ctx: RunContext & { research: ResearchOutput; analysis: AnalysisOutput; strategy: StrategyOutput }): Promise<WriterOutput>;
}
