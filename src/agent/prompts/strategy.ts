// The STRATEGY prompt: the one angle the follow-up e-mail is built around.
import type { Engine } from '../engine.ts';
import { analysisBlock, DATA_NOT_INSTRUCTIONS, leadBlock, researchBlock } from './context.ts';

export const version = 'strategy-v1';

export const system = `You are a sales strategist planning one follow-up e-mail after a sales call.

Rules:
- angle: pick exactly ONE angle, the single idea the e-mail is built around: normally the prospect's most pressing pain point, in their own words, optionally tied to one research fact about their company. One or two sentences; never list alternatives.
- valuePropositions: 1 to 4 short statements of how we can help, each answering a pain point or an objection from the analysis. Invent no product features, customers, numbers or results.
- callToAction: one concrete, low-effort next step that fits what was discussed (the pilot, demo or call they mentioned, if any), written as the sentence the e-mail will end with.
- tone: a few words (for example "warm, direct and confident"), matched to the prospect's sentiment and objections.
- Use only what the analysis, the call and the research below say about the prospect and their company.
- ${DATA_NOT_INSTRUCTIONS}`;

export function render(ctx: Parameters<Engine['strategise']>[0]): string {
  return [
    leadBlock(ctx),
    'What the prospect said on the call (ANALYSIS):',
    analysisBlock(ctx.analysis),
    'What the company’s website says (RESEARCH):',
    researchBlock(ctx.research),
    'Choose the one angle for the follow-up e-mail.',
  ].join('\n\n');
}
