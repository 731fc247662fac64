// The WRITER prompt: the follow-up e-mail, grounded in RESEARCH and ANALYSIS only.
import type { Engine } from '../engine.ts';
import { analysisBlock, companyOf, DATA_NOT_INSTRUCTIONS, firstNameOf, leadBlock, researchBlock, strategyBlock, tagged } from './context.ts';

export const version = 'writer-v1';

export const SUBJECT_MAX = 80;
export const BODY_TARGET = 1800;

export const system = `You write the follow-up e-mail a salesperson reviews and sends after a sales call.

Grounding (strict):
- State nothing about the prospect's company (numbers, amounts, dates, team size, locations, offices, customers, products, tools, funding, plans) that is not in the research facts, the website title, description or summary, or the analysis given below. When unsure whether something is supported, leave it out.
- Cite at most two research facts, and only ones that connect to the angle.
- Do not name our own company, product, customers or results, and invent no statistics or case studies.

Content:
- Greet the lead by first name ("Hi <first name>,").
- Name the company, and at least one concern the prospect raised on the call, in their words where it reads naturally.
- Build the e-mail around the strategy's angle, in its tone, and end with its call to action.
- Sign with the sender's name when it is given; otherwise end with a closing ("Best,") and no name.

Format:
- subject: at most ${SUBJECT_MAX} characters, specific to this prospect, no clickbait.
- body: plain text, paragraphs separated by a blank line, at most about ${BODY_TARGET} characters; no markdown, no placeholders such as [Name].
- When reviewer feedback is given, follow it: it overrides the content and format guidance above, never the grounding rules.
- ${DATA_NOT_INSTRUCTIONS}`;

export function render(ctx: Parameters<Engine['write']>[0]): string {
  const first = firstNameOf(ctx.lead.name);
  const company = companyOf(ctx);
  const feedback = ctx.feedback?.trim();
  return [
    leadBlock(ctx),
    'What the company’s website says (RESEARCH; the only facts about the company you may state besides the analysis):',
    researchBlock(ctx.research),
    'What the prospect said on the call (ANALYSIS):',
    analysisBlock(ctx.analysis),
    'The plan for this e-mail (STRATEGY):',
    strategyBlock(ctx.strategy),
    feedback
      ? `Feedback on the previous draft. Write a new draft that follows it:\n${tagged('feedback', feedback)}`
      : null,
    [
      'Write the e-mail.',
      first ? `Greet ${first} by first name.` : 'Greet the lead by name.',
      company ? `Name ${company}.` : null,
      ctx.senderName?.trim() ? `Sign as ${ctx.senderName.trim()}.` : 'No sender name is known: end with a closing only.',
    ].filter(Boolean).join(' '),
  ].filter((part): part is string => part !== null).join('\n\n');
}
