// PLACEHOLDER (issue 42, seq helper): the writer helper's src/agent/follow-up/ replaces this file with WRITER's
// follow-up (DESIGN §13, §12's rules, at most 100 words, never repeating an earlier touch). Until that is merged, a
// plain, grounded bump built from the step's instruction and the lead's name, so that sequences run end to end. The
// signature is the agreed one: the merger keeps it and wires the real writer in.
import type { AnalysisOutput, ResearchOutput, StrategyOutput } from '../../schemas/outputs.ts';
import type { CallFacts, LeadFacts, Sender } from '../engine.ts';

export interface FollowUpInput {
  lead: LeadFacts;
  call: CallFacts;
  research?: ResearchOutput;
  analysis?: AnalysisOutput;
  strategy?: StrategyOutput;
  sender?: Sender;
  touchNumber: number;
  touchCount: number;
  instruction: string;
  earlier: { subject: string; body: string }[];
  reply?: { from: string | null; text: string } | null;
  feedback?: string | null;
}

export interface FollowUpDraft {
  subject: string;
  body: string;
}

export async function writeFollowUp(input: FollowUpInput): Promise<FollowUpDraft> {
  const first = input.earlier[0];
  const name = input.lead.name.trim().split(/\s+/)[0] || 'there';
  const closing = input.touchNumber === input.touchCount
    ? 'If the timing is not right, no need to reply; I will leave it here.'
    : 'Would a short call next week work to talk it through?';
  const body = [
    `Hi ${name},`,
    '',
    input.touchNumber === 2
      ? 'I wanted to bring my note below back to the top of your inbox.'
      : 'One more short note on my e-mail below.',
    closing,
    '',
    `Best,\n${input.sender?.name ?? ''}`.trimEnd(),
  ].join('\n');
  return { subject: first ? `Re: ${first.subject}` : 'Following up', body };
}
