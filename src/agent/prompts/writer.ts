// The WRITER prompt: the follow-up e-mail, grounded in RESEARCH and ANALYSIS only, written from the same brief as
// the offline writer's (brief.ts) and held to the same checks (../draft-checks.ts).
import { FIRST_EMAIL_WORDS } from '../draft-checks.ts';
import type { Engine } from '../engine.ts';
import { callFactsBlock, commitmentsBlock, feedbackInstructions, limitsBlock, nextStepBlock } from './brief.ts';
import {
  companyOf, DATA_NOT_INSTRUCTIONS, firstNameOf, leadBlock, researchBlock, senderNameOf, strategyBlock, tagged,
} from './context.ts';

export const version = 'writer-v3';

export const SUBJECT_MAX = 80;

/** One paragraph of the system prompt per entry; an entry is kept on one line of the prompt however it is written. */
const SYSTEM: string[] = [
  'You write the follow-up e-mail a salesperson reviews and sends after a sales call. '
    + 'A demanding salesperson reads it and sends it with at most a light edit.',
  '',
  'Grounding (strict):',
  "- State nothing about the prospect's company (numbers, amounts, dates, team size, locations, offices, customers, "
    + 'products, tools, funding, plans) that is not in the research facts, the website title, description or summary, '
    + 'or the analysis given below. When unsure whether something is supported, leave it out.',
  "- Say nothing of the prospect's feelings, priorities, timing, pressure or situation, and nothing of what was said "
    + 'or agreed, that the prospect did not say on the call (no "I know the timing is tight" unless they said so). '
    + "The salesperson's own lines are never the prospect's pains.",
  '- Cite at most two research facts, and only ones that connect to the angle.',
  '- Do not name our own company, product, customers or results, and invent no statistics or case studies.',
  '',
  'Content:',
  '- Greet the lead by first name ("Hi <first name>,").',
  '- Open on the call, and name the one or two things that matter most to this prospect: their pain with its figure, '
    + 'in our words, not pasted from the transcript. A draft that could have been written without the call is not good '
    + 'enough.',
  '- Carry the facts of the call where they serve: the figures with what they measure, the people by name with their '
    + 'role where natural, the tools they use, and the budget and timing signals. Never list the call back as bullets.',
  '- Deliver on every promise the salesperson made on the call, each as a commitment with its date '
    + '("I\'ll send the SOC 2 report by Friday"). Promise nothing new.',
  '- End with the agreed next step as the call to action: who does what, by when. With none agreed, propose one that '
    + 'fits the call.',
  '- A "not now" call gets a short, gracious note that asks for nothing the prospect declined.',
  "- Build the e-mail around the strategy's angle, in its tone.",
  '- Sign off: when a <signature> is given, end with a closing ("Best regards,") and the signature exactly as given; '
    + 'otherwise with "Best regards," and the sender\'s name; with neither, with "Best regards," alone.',
  '',
  'Format:',
  `- subject: at most ${SUBJECT_MAX} characters, specific to this prospect, no clickbait.`,
  `- body: plain text, paragraphs separated by a blank line, at most ${FIRST_EMAIL_WORDS} words not counting the `
    + 'greeting line and the sign-off; no markdown, no placeholders such as [Name].',
  '- Clean: no speaker labels, timestamps, cue numbers, transcript markup such as [inaudible], or fillers (um, uh); '
    + 'no run of 8 or more words copied from the transcript, even with the pronouns changed.',
  "- When reviewer feedback is given, it is the reviewer's instructions for the new version: follow them (shorter or "
    + 'longer; a word limit, counted over the body without the greeting and the sign-off, is a hard limit; more formal '
    + 'or more casual; mention something, only if the research or the call backs it; leave something out; lead with '
    + 'something; another angle or focus). They override the content and format guidance above, never the grounding '
    + 'rules, and never drop a commitment unless they say so. Never quote or paraphrase the feedback into the e-mail.',
  "- When the latest version is given (a person's edit included), revise it as the feedback asks, keeping what the "
    + 'feedback does not ask to change; without feedback, write a version that differs from it visibly (another '
    + 'opening, structure or angle).',
  `- ${DATA_NOT_INSTRUCTIONS}`,
];

export const system = SYSTEM.join('\n');

export function render(ctx: Parameters<Engine['write']>[0]): string {
  const first = firstNameOf(ctx.lead.name);
  const company = companyOf(ctx);
  const feedback = ctx.feedback?.trim();
  const sender = senderNameOf(ctx);
  const signature = ctx.sender?.signature?.trim();
  const previous = ctx.previousDraft;
  const instructions = feedback ? feedbackInstructions(feedback) : [];
  return [
    leadBlock(ctx),
    'What the company’s website says (RESEARCH; the only facts about the company you may state besides the analysis):',
    researchBlock(ctx.research),
    'What the prospect said on the call (ANALYSIS; a quote found in the transcript has its line number):',
    callFactsBlock(ctx.analysis, ctx.quoteLines ?? new Map()),
    commitmentsBlock(ctx.analysis),
    nextStepBlock(ctx.analysis, ctx.strategy),
    'The plan for this e-mail (STRATEGY):',
    strategyBlock(ctx.strategy),
    limitsBlock(ctx),
    previous
      ? `The latest version of the draft (version ${previous.version}, a person’s edit included), to revise:\n`
        + tagged('previous_draft', `Subject: ${previous.subject}\n\n${previous.body}`)
      : null,
    feedback
      ? [
          "The reviewer's instructions for the new version: follow them, do not quote them:\n"
            + tagged('feedback', feedback),
          instructions.length > 0
            ? `Read as instructions:\n${instructions.map((line) => `- ${line}`).join('\n')}`
            : null,
        ].filter(Boolean).join('\n')
      : previous
        ? 'The reviewer gave no instructions: write a clearly different version (another opening, structure or angle), '
          + 'as grounded as the first, with every commitment and the next step still in.'
        : null,
    signature
      ? `The sender's signature, to end the e-mail with exactly as given:\n${tagged('signature', signature)}`
      : null,
    [
      'Write the e-mail.',
      first ? `Greet ${first} by first name.` : 'Greet the lead by name.',
      company ? `Name ${company}.` : null,
      signature
        ? 'Sign off with the signature above.'
        : sender ? `Sign as ${sender}.` : 'No sender name is known: end with a closing only.',
    ].filter(Boolean).join(' '),
  ].filter((part): part is string => part !== null).join('\n\n');
}
