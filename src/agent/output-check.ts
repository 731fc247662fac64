// Checking a step's output against its schema (src/agent/outputs.ts) before it is stored. Apart from the schemas,
// which the API's routes and document use too, so that only a process that runs steps loads TypeBox's compiler.
import { Compile } from 'typebox/compile';
import { AnalysisOutput, ResearchOutput, StrategyOutput, WriterOutput, type StepNode } from '../schemas/outputs.ts';

const outputValidators = {
  RESEARCH: Compile(ResearchOutput),
  ANALYSIS: Compile(AnalysisOutput),
  STRATEGY: Compile(StrategyOutput),
  WRITER: Compile(WriterOutput),
} as const;

/** Throws when an output does not match its step's schema; the message names the first mismatch. */
export function assertStepOutput(node: StepNode, output: unknown): void {
  const validator = outputValidators[node];
  if (validator.Check(output)) return;
  const first = validator.Errors(output)[0];
  const where = first?.instancePath || '(root)';
  throw new Error(`${node} output does not match its schema at ${where}: ${first?.message ?? 'invalid'}`);
}
