// ANALYSIS: the call read into pains, objections, buying signals, next steps and commitments, each with the
// transcript lines it came from, and the buyer's mood from the buyer's own words only (never the rep's).
import type { RunContext } from '../../engine.ts';
import type { AnalysisOutput, Evidence } from '../../../schemas/outputs.ts';
import { readFacts } from '../call-facts.ts';
import { type CallFacts, readCallFacts, type Sentence } from './facts.ts';
import { detectFormat } from './transcript.ts';

export type AnalyseContext = RunContext;

const OBJECTION =
  /\b(expensive|budget|price|pricing|cost|quoted us lower|security|compliance|gdpr|hipaa|soc ?2|residency|not sold|not convinced|sceptic\w*|skeptic\w*|non-starter|not signing|won['’]t sign|already (?:use|have|using)|integration|onboarding|bandwidth|not now|timing|not a priority|locked in|contract)\b/i;
const SIGNAL =
  /\b(interested|love|excited|amazing|sounds good|makes sense|let['’]s (?:do|go|set|put)|works for me|works\b|we['’]ll move|i can (?:pull|get|sign)|move forward|budget (?:is )?(?:approved|set aside)|pilot|trial|go live|live by)\b/i;
/** Words of a buyer who likes what they hear, or takes up what was proposed ("Yes, let's do that"). */
const POSITIVE = /\b(?:love|amazing|excited|great|perfect|sounds good|that helps|interested|makes sense|exactly|brilliant|fantastic|impressive|let['’]s do (?:it|that|this))\b|\bgood\./gi;
const SCEPTICAL =
  /\b(not sold|not convinced|sceptic\w*|skeptic\w*|not a natural enthusiast|a toy|not (?:on )?a slide|babysit\w*|none of them did|doubt|usually\.|not a vendor['’]s|we['’]re out|heard that before|prove it)\b/gi;
const NEGATIVE = /\b(not interested|no thanks|waste of (?:my |our )?time|not for us|not a fit|don['’]t call|stop calling|unsubscribe)\b/i;

/** Positive, neutral or negative, from what the buyer's side said; "not now" is negative, scepticism neutral. */
export function sentimentOf(facts: CallFacts): AnalysisOutput['sentiment'] {
  if (facts.notNow) return 'negative';
  let score = 0;
  for (const s of facts.sentences) {
    if (s.role === 'rep') continue;
    if (NEGATIVE.test(s.text)) return 'negative';
    score += Math.min(2, s.text.match(POSITIVE)?.length ?? 0);
    score -= Math.min(2, s.text.match(SCEPTICAL)?.length ?? 0);
  }
  return score >= 2 ? 'positive' : 'neutral';
}

function distinct<T extends { text: string }>(items: T[], max: number): T[] {
  const seen = new Set<string>();
  return items.filter((i) => {
    const key = i.text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  }).slice(0, max);
}

/** Each item of the analysis is at most this long, its full stop included (a sentence that never ends is cut). */
const ITEM_MAX = 220;

/** The sentence ended with a full stop, cut at a word (never inside a character) to stay within ITEM_MAX. */
const ensureStop = (t: string): string => {
  let text = t;
  if (text.length > ITEM_MAX - 1) {
    const space = text.lastIndexOf(' ', ITEM_MAX - 1);
    text = text.slice(0, space > ITEM_MAX / 2 ? space : ITEM_MAX - 1);
    if (!text.isWellFormed()) text = text.slice(0, -1);
    text = text.replace(/[,;:\s-]+$/, '');
  }
  return /[.!?]$/.test(text) ? text : `${text}.`;
};
/** "And the CRM is…", "But honestly, price is…": an item starts on its point, not on how it was said. */
const cap = (t: string): string => {
  const bare = t.replace(/^(?:(?:and|but|so|yeah|yes|well|okay|ok|honestly|look|also|plus)\b[,:]?\s+)+/i, '');
  const text = bare.length >= 12 ? bare : t;
  return text.charAt(0).toUpperCase() + text.slice(1);
};
/** A budget that is approved or set aside is a buying signal, not an objection. */
const BUDGET_SIGNAL = /\bbudget (?:is |was )?(?:approved|set aside|signed off)|\b(?:approved|set aside) (?:a )?budget\b/i;

export function analyseCall(ctx: AnalyseContext): AnalysisOutput {
  const facts = readCallFacts(ctx.call.transcript, ctx.lead.name, ctx.senderName, ctx.lead.companyName);
  const theirs = facts.sentences.filter((s) => s.role !== 'rep' && !s.text.endsWith('?'));
  const pains = distinct(facts.pains.map((p) => ({ text: cap(ensureStop(p.text)), lines: p.lines })), 5);
  const objections = distinct(theirs.filter((s) => OBJECTION.test(s.text) && !BUDGET_SIGNAL.test(s.text) && !facts.pains.slice(0, 5).some((p) => p.text === s.text)).map((s) => ({ text: cap(ensureStop(s.text)), lines: [s.line] })), 4);
  const signals = distinct(theirs.filter((s) => SIGNAL.test(s.text)).map((s) => ({ text: cap(ensureStop(s.text)), lines: [s.line] })), 4);
  const commitments = facts.commitments.map((c) => ({ text: ensureStop(`I’ll ${c.what}${c.when ? ` ${c.when}` : ''}`), lines: c.lines }));
  const step = facts.nextStep;
  const nextSteps = distinct([...(step ? [{ text: cap(ensureStop(step.text)), lines: step.lines }] : []), ...commitments], 4);
  const evidence: Evidence[] = [
    ...pains.map((p) => ({ kind: 'pain' as const, ...p })),
    ...objections.map((p) => ({ kind: 'objection' as const, ...p })),
    ...signals.map((p) => ({ kind: 'signal' as const, ...p })),
    ...nextSteps.map((p) => ({ kind: 'next_step' as const, ...p })),
    ...commitments.map((p) => ({ kind: 'commitment' as const, ...p })),
  ];
  const spoken = facts.sentences.map((s: Sentence) => ({ role: s.role === 'rep' ? ('rep' as const) : s.role === 'buyer' ? ('prospect' as const) : ('note' as const), text: s.text }));
  return {
    engine: 'offline',
    painPoints: pains.map((p) => p.text),
    objections: objections.map((p) => p.text),
    buyingSignals: signals.map((p) => p.text),
    nextSteps: nextSteps.map((p) => p.text),
    sentiment: sentimentOf(facts),
    facts: readFacts(spoken),
    evidence,
    commitments: facts.commitments.map((c) => ({ who: c.who, what: c.what, when: c.when, lines: c.lines })),
    agreedNextStep: step ? { what: step.what, when: step.when, who: step.who, lines: step.lines } : null,
    format: detectFormat(ctx.call.transcript),
  };
}
