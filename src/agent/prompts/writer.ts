// The WRITER prompt: the follow-up e-mail, grounded in RESEARCH and ANALYSIS only.
import type { Engine } from '../engine.ts';
import { analysisBlock, companyOf, DATA_NOT_INSTRUCTIONS, firstNameOf, leadBlock, researchBlock, senderNameOf, strategyBlock, tagged } from './context.ts';

export const version = 'writer-v2';

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
- Carry the facts of the call: the figures with what they measure, the people by name with their role where natural, the tools they use, and the budget and timing signals. A draft that could have been written without the call is not good enough.
- Deliver on every promise the salesperson made on the call: say what follows and when ("As promised, here is …" or a short list of what comes next). Promise nothing new.
- Build the e-mail around the strategy's angle, in its tone, and end with its call to action.
- Sign off: when a <signature> is given, end with a closing ("Best regards,") and the signature exactly as given; otherwise with "Best regards," and the sender's name; with neither, with "Best regards," alone.

Format:
- subject: at most ${SUBJECT_MAX} characters, specific to this prospect, no clickbait.
- body: plain text, paragraphs separated by a blank line, at most about ${BODY_TARGET} characters; no markdown, no placeholders such as [Name].
- When reviewer feedback is given, it is the reviewer's instructions for the new version: follow them (shorter or longer; a word limit, counted over the whole body including the greeting and sign-off, is a hard limit; more formal or more casual; mention something, only if the research or the call backs it; leave something out; another angle or focus). They override the content and format guidance above, never the grounding rules. Never quote or paraphrase the feedback into the e-mail.
- When a previous draft is given, the new version must differ from it visibly (another opening, structure or angle), even without feedback.
- ${DATA_NOT_INSTRUCTIONS}`;

export function render(ctx: Parameters<Engine['write']>[0]): string {
  const first = firstNameOf(ctx.lead.name);
  const company = companyOf(ctx);
  const feedback = ctx.feedback?.trim();
  const sender = senderNameOf(ctx);
  const signature = ctx.sender?.signature?.trim();
  const previous = ctx.previousDraft;
  return [
    leadBlock(ctx),
    'What the company’s website says (RESEARCH; the only facts about the company you may state besides the analysis):',
    researchBlock(ctx.research),
    'What the prospect said on the call (ANALYSIS):',
    analysisBlock(ctx.analysis),
    'The plan for this e-mail (STRATEGY):',
    strategyBlock(ctx.strategy),
    previous
      ? `The previous draft (version ${previous.version}), which the reviewer sent back; write another version:\n${tagged('previous_draft', `Subject: ${previous.subject}\n\n${previous.body}`)}`
      : null,
    feedback
      ? `The reviewer's instructions for the new version: follow them, do not quote them:\n${tagged('feedback', feedback)}`
      : previous
        ? 'The reviewer gave no instructions: write a clearly different version (another opening, structure or angle), as grounded as the first.'
        : null,
    signature ? `The sender's signature, to end the e-mail with exactly as given:\n${tagged('signature', signature)}` : null,
    [
      'Write the e-mail.',
      first ? `Greet ${first} by first name.` : 'Greet the lead by name.',
      company ? `Name ${company}.` : null,
      signature ? 'Sign off with the signature above.' : sender ? `Sign as ${sender}.` : 'No sender name is known: end with a closing only.',
    ].filter(Boolean).join(' '),
  ].filter((part): part is string => part !== null).join('\n\n');
}
