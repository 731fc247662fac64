// WRITER: the follow-up a good rep sends. It opens on the call, names the one or two things that matter most to
// this buyer (their pain with its figure, in our words), restates every commitment with its date, and ends on the
// agreed next step; a "not now" call gets a short note that asks for nothing. Within the word limit, always.
import type { RunContext } from '../../engine.ts';
import type { WriterOutput } from '../../../schemas/outputs.ts';
import { signOff } from '../../sign-off.ts';
import { toOneLine } from '../../../domain/validation.ts';
import { inOurWords, SaidIndex } from './copying.ts';
import { type CallFacts, type Commitment, CONDITION, MONTHS, type NextStep, readCallFacts } from './facts.ts';
import { bodyWords, keywords, omissionTerms, readFeedback, type Style } from './feedback.ts';

const DEADLINE_CLAUSE = new RegExp(String.raw`\b(?:until|by|before|start|go-live|go live|opening|live|launch\w*|deadline)\b.{0,40}\b(?:${MONTHS}|Q[1-4])\b|\b(?:${MONTHS})\s\d{1,2}\b`, 'i');

export type WriteContext = RunContext & { analysis: NonNullable<RunContext['analysis']>; strategy: NonNullable<RunContext['strategy']> };

/** A sentence of the e-mail with what it is, so that a word limit drops the least needed first. */
interface Part {
  kind: 'open' | 'pain' | 'deadline' | 'condition' | 'commitment' | 'next' | 'mention' | 'close' | 'kept';
  text: string;
  /** A shorter form, used when the limit is tight. */
  short?: string;
  /** Lower goes last; commitments and the next step are never dropped for length. */
  priority: number;
  paragraph: number;
}

const DEFAULT_LIMIT = 125;
const NOT_NOW_LIMIT = 80;

export function firstNameOf(name: string): string | null {
  const words = name.trim().split(/\s+/).filter((w) => !/^(dr|mr|mrs|ms|mx|prof)\.?$/i.test(w));
  const first = words[0];
  return first && /^[\p{L}][\p{L}'’-]*$/u.test(first) ? first : null;
}

/** The buyer's words turned to face them: their "I"/"we"/"our" become "you"/"your", and their "you"/"your" (us) ours. */
const PERSON: Record<string, string> = {
  "i'm": 'you’re', "we're": 'you’re', "i've": 'you’ve', "we've": 'you’ve', "i'll": 'you’ll', "we'll": 'you’ll', "i'd": 'you’d', "we'd": 'you’d',
  'i am': 'you are', 'i was': 'you were', i: 'you', we: 'you', my: 'your', our: 'your', me: 'you', us: 'you', ourselves: 'yourselves',
  "you're": 'we’re', "you've": 'we’ve', "you'll": 'we’ll', "you'd": 'we’d', your: 'our', yours: 'ours', yourselves: 'ourselves',
};
const PERSON_WORD = /\b(?:(?:I|we|you)['’](?:m|re|ve|ll|d)|I am|I was|I|we|my|our|me|us|ourselves|you|your|yours|yourselves)\b/gi;
/** Words after which "you" is an object ("send you", "with you"): it becomes "us"; elsewhere the subject "we". */
const BEFORE_OBJECT = /(?:^|\s)(?:to|for|with|from|about|by|at|on|of|than|like|give|send|show|tell|let|help|get|got|sell|charge|ask|told|sent|showed|gave|asked|call|contact|email|e-mail)\s$/i;

/** "Our no-show rate is about 18 percent" → "your no-show rate…"; "I want to see your report" → "you want to see our report". */
export function secondPerson(clause: string): string {
  return clause.replace(PERSON_WORD, (word, at: number) => {
    // "the US" is a country.
    if (word === 'US') return word;
    const lower = word.toLowerCase().replace(/’/g, "'");
    return lower === 'you' ? (BEFORE_OBJECT.test(clause.slice(Math.max(0, at - 12), at)) ? 'us' : 'we') : (PERSON[lower] ?? word);
  });
}

const LEADING = /^(?:(?:yeah|yes|so|and|but|well|okay|ok|honestly|look|right|sure|also|plus|great|perfect|understood|absolutely|got it|quick context|the (?:big )?(?:problem|thing|issue) is(?: that)?|the real test is|that['’]s|it['’]s|timing matters because)\b[,:]?\s+)+/i;

/** The part of a buyer's sentence that carries its point, cut to a clause and put in the second person. */
export function restate(sentence: string, anchor: string | RegExp | null, note = false): string {
  let text = sentence.replace(/[.!?]+$/, '');
  // Notes tell of the buyer: "She is frustrated that…", "Their team loses…" are the buyer's own, to them.
  if (note) {
    const VERB: Record<string, string> = { is: 'are', was: 'were', has: 'have', had: 'had', wants: 'want', needs: 'need' };
    text = text.replace(/^(?:she|he)\s(is|was|has|had|wants|needs)\b/i, (_m, v: string) => `you ${VERB[v.toLowerCase()]}`).replace(/^their\b/i, 'your');
  }
  let clauses = text.split(/,\s(?:and|but|so)\s|;\s|\s(?:but|because|so)\s|,\s(?=(?:and|but)\b)|\sand\s(?=(?:we|I|it|our|my|that|they)\b)|\.\s/i);
  // Speech without punctuation: a new subject starts a new clause.
  clauses = clauses.flatMap((c) => (c.split(' ').length > 12 ? c.split(/\s(?=(?:we['’]re|we|I['’]m|I|that['’]s)\s)|\s(?=and\s(?:we|I|they|it|he|she)\b)/) : [c]));
  const has = (c: string) => (anchor === null ? false : typeof anchor === 'string' ? c.includes(anchor) : anchor.test(c));
  let clause = clauses.find(has) ?? clauses[0] ?? text;
  // "So the short version: our pickers walk…": a few words of preamble before a colon are no part of the point.
  clause = clause.replace(/^(?:[\p{L}'’-]+\s){0,3}[\p{L}'’-]+:\s+(?=\S)/u, '').replace(LEADING, '').replace(/\blike\s(?=\d|one|two|three|four|five|six|seven|eight|nine|ten)/gi, '').replace(/\ba good\s/gi, '').trim();
  // Speech repeats a word ("the the overtime"); a restatement says it once.
  clause = clause.replace(/\b([\p{L}']+)\s+\1\b/giu, '$1');
  const words = clause.split(/\s+/);
  if (words.length > 16) {
    const first = typeof anchor === 'string' ? anchor.split(' ')[0]! : null;
    const at = Math.max(0, words.findIndex((w) => (first ? w.startsWith(first) : has(w))));
    // From the clause's start when it is near, so that "that was $85,000" keeps what "that" was.
    const start = at <= 14 ? 0 : at - 6;
    let end = Math.min(words.length, Math.max(start + 14, at + (typeof anchor === 'string' ? anchor.split(' ').length : 1)));
    // A list is read to its end: "across Sweden, Germany" keeps its "and the Netherlands".
    if (/^(?:and|or)$/i.test(words[end] ?? '') && (words.slice(Math.max(start, end - 3), end).some((w) => w.endsWith(',')) ||
      words.slice(Math.max(start, end - 5), end).some((w) => /^between$/i.test(w)))) {
      const stop = Math.min(words.length, end + 5);
      for (end++; end < stop && !/^(?:to|for|so|because|which|that|when|before|after)$/i.test(words[end]!); end++) if (/[,.;]$/.test(words[end]!)) { end++; break; }
    }
    clause = words.slice(start, end).join(' ');
  }
  // An object the clause cannot name ("to get under it"): the infinitive goes, what it was for stays.
  clause = clause.replace(/\s+to\s+[a-z]+(?:\s+(?:under|over|into|through|on|off|out|up|down|in|with|past|below|above))?\s+(?:it|that|them)\b(?=\s+(?:before|by|until|within)\b|$)/i, '');
  // Notes are the rep's own words about the buyer: their "our" is ours already.
  return (note ? clause : secondPerson(clause)).replace(/[,;:\s]+$/, '');
}

/** A figure as said, in digits or words: "fourteen spreadsheets" keeps its figure as much as "14" does. */
const SPELLED_NUMBER =
  /\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty|hundred|thousand|million|half|third|quarter|dozen)\b/i;

/** A clause that leans on one before it: "it cost…", "that was…", "see it in writing" say nothing alone. */
const DANGLING_SUBJECT = /^(?:it|that|this|they|them|those|these)\s/i;
const DANGLING_OBJECT = /\b(?:see|need|want|have|get|put|read|show|like)\s(?:it|that|this|them)\b/i;

const COMMON_START = /^(?:You|Your|You’re|You’ve|You’ll|The|A|An|Every|Each|It|It's|It’s|That|This|There|About|Around|Roughly|One|Some|Most|All|If|When|Once|Nothing|No|Go-live|Within|By|Before|Today)\b/;
/**
 * A clause joined after a colon starts lower-case ("stood out: reporting takes four days"), unless its first word is
 * a name: "I", an acronym or a word with capitals or digits inside, or one the call writes capitalised mid-sentence.
 */
const lowerFirstOf = (t: string, names: ReadonlySet<string> = new Set()): string => {
  const first = /^[\p{L}'’-]+/u.exec(t)?.[0] ?? '';
  // "Black Friday is November 28": a word whose next word is capitalised as well is part of a name.
  const common = COMMON_START.test(t) || (/^\p{Lu}\p{Ll}+$/u.test(first) && !names.has(first) && !/^I['’]/.test(first) && !/^\S+\s\p{Lu}\p{Ll}/u.test(t));
  return common ? t.charAt(0).toLowerCase() + t.slice(1) : t;
};

/** The words a call capitalises mid-sentence: names, which keep their capital after a colon. */
function namesOf(facts: CallFacts): Set<string> {
  const names = new Set<string>();
  for (const s of facts.sentences.slice(0, 2000)) {
    for (const m of s.text.slice(0, 2000).matchAll(/(?<=[\p{L}\p{N},;)]\s)\p{Lu}[\p{L}'’-]*/gu)) names.add(m[0]);
  }
  return names;
}
const upperFirst = (t: string): string => t.charAt(0).toUpperCase() + t.slice(1);

/** "send you X, Jonas, and Y, Erik" → "send X for Jonas, and Y for Erik"; appositives after the object dropped. */
function commitmentText(c: Commitment, stakeholders: string[]): string {
  let what = c.what;
  for (const name of stakeholders) what = what.replace(new RegExp(String.raw`,\s${name}(?=,|$)`), ` for ${name}`);
  what = what
    .replace(/^send you\s/i, 'send over ')
    .replace(/^(introduce you to [A-Z][\w&.-]*(?:\s[A-Z][\w&.-]*){0,3}),\s(?:a|an|the)\s.*$/, '$1')
    .replace(/,\s(?:they|which|who)\s[^,]*,\s/i, ', ');
  what = what
    .replace(/[,;:\s]+$/, '')
    .replace(/^put together\b/i, 'prepare')
    .replace(/^introduce you to\b/i, 'connect you with')
    .replace(/^send the invite\b/i, 'send a calendar invite')
    .replace(/^call you\b/i, 'give you a call');
  const when = c.when;
  return when ? `${upperFirst(when)}, I’ll ${what}` : `I’ll ${what}`;
}

function onWhen(when: string): string {
  // "in January", "by the 22nd", "next Tuesday": the phrase brings its own preposition.
  if (/^(?:in|on|at|by|before|after|next|this|within|during|around|early|late|end)\b/i.test(when)) return when;
  return /^(?:\d|noon)/i.test(when) && !/^\d{1,2}\s(?:of\s)?[A-Z]/.test(when) ? `at ${when}` : `on ${when}`;
}

function nextStepText(step: NextStep, formal: boolean): string {
  const who = step.who.length > 0 ? ` with ${step.who.join(' and ')}` : '';
  const when = step.when ? ` ${onWhen(step.when)}` : '';
  if (step.what === 'visit') return `${formal ? 'I look forward to seeing you' : 'See you'}${when} for the visit${who}.`;
  const ahead = `${formal ? 'I look forward to' : 'Looking forward to'} the ${step.what}${when}${who}.`;
  // Agreed without a date: the one thing left to settle is when.
  if (!step.when) return `${ahead} Which ${/\b(?:pilot|trial|rollout|roll-out|onboarding|proof of concept|poc)\b/i.test(step.what) ? 'week would suit you to start' : 'day would suit you'}?`;
  return ahead;
}

function proposal(facts: CallFacts): string {
  const said = facts.sentences.map((s) => s.text).join(' ').slice(0, 20_000);
  if (/\b(pilot|trial|proof of concept)\b/i.test(said)) return 'Would a short call next week to scope a pilot suit you? Send me a time that works and I’ll set it up.';
  return 'Would a 20-minute call next week to agree next steps suit you? Send me a time that works and I’ll set it up.';
}

/**
 * The closing, the sender's name once, then "-- " and the signature when one is set, as every engine signs
 * (src/agent/sign-off.ts); the style picks the closing word, signOff the default.
 */
function signature(ctx: RunContext, style: Style): string {
  const closing = style.formal ? 'Kind regards,' : style.casual ? 'Cheers,' : undefined;
  return signOff(ctx.sender ?? { name: ctx.senderName, signature: null }, closing === undefined ? {} : { closing });
}

/** The lead's company, else the name its website's title gives, else the website's host, else "your team". */
export function companyOf(ctx: RunContext): string {
  const named = ctx.lead.companyName?.trim();
  if (named) return named;
  const title = ctx.research?.website.title?.split(/\s[|–—-]\s|:\s/)[0]?.trim();
  if (title && title.length <= 60) return title;
  try {
    if (ctx.lead.companyWebsite) return new URL(ctx.lead.companyWebsite).hostname.replace(/^www\./, '');
  } catch {
    // Not a URL: no host to name.
  }
  return 'your team';
}

/** The parts of the draft in their order, before any word limit. */
function partsOf(ctx: WriteContext, facts: CallFacts, style: Style, ours: (text: string) => string): Part[] {
  const parts: Part[] = [];
  const names = namesOf(facts);
  const lowerFirst = (t: string): string => lowerFirstOf(t, names);
  const v = style.variant % 3;
  // What the reviewer asked to drop is left out here, so that the next pain takes its place.
  const omitted = style.omissions.flatMap(omissionTerms);
  const wanted = (text: string): boolean => text !== '' && !omitted.some((t) => t.test(text));
  const others = facts.stakeholders.filter((n) => facts.sentences.some((s) => s.role === 'buyer' && s.speaker?.startsWith(n))).slice(0, 2);
  if (facts.notNow) {
    parts.push({ kind: 'open', text: v === 1 ? 'I appreciated the straight answer on our call.' : 'Thanks for being straight with me on the call.', priority: 0, paragraph: 0 });
    const context = facts.deadlines[0] ?? facts.pains[0];
    const told = context ? ours(restate(context.text, DEADLINE_CLAUSE)) : '';
    if (wanted(told)) parts.push({ kind: 'deadline', text: `Understood: ${lowerFirst(told)}, and that comes first.`, priority: 3, paragraph: 0 });
  } else {
    const opening = v === 1 ? 'Good to speak with you' : v === 2 ? 'Thanks again for the call' : 'Thanks for the time on the call';
    parts.push({ kind: 'open', text: `${opening}${others.length ? `, and to ${others.join(' and ')} for joining` : ''}.`, short: `${opening}.`, priority: 0, paragraph: 0 });
    // A pain the copy guard could only tell without its figure, or not at all, gives way to the next one.
    const told = (v === 2 ? [...facts.pains.slice(1), facts.pains[0]] : facts.pains).filter((p) => p !== undefined).slice(0, 6)
      .map((p) => ({ pain: p, text: ours(restate(p.text, p.figure, p.note)) }))
      .filter(({ pain, text }) => text.split(/\s+/).length >= 3 && wanted(text) && !DANGLING_SUBJECT.test(text) && (!pain.figure || SPELLED_NUMBER.test(text)))
      .slice(0, 2);
    const pains = told.map((t) => t.pain);
    const said = told.map((t) => t.text);
    if (said.length === 2) {
      // "you mentioned" once is enough: the second point is what was mentioned too.
      const second = /^you mentioned\b/i.test(said[0]!) ? said[1]!.replace(/^you mentioned\s/i, '') : said[1]!;
      // Our "and" before the second may make a run with the buyer's own "And the CRM…": then a semicolon joins them.
      const head = `${v === 1 ? 'What stayed with me' : 'Two things stood out'}: ${lowerFirst(said[0]!)}`;
      const joined = [`${head}, and ${lowerFirst(second)}.`, `${head}; ${lowerFirst(second)}.`].find((t) => ours(t) === t) ?? `${head}; ${lowerFirst(second)}.`;
      parts.push({ kind: 'pain', text: joined, short: `${upperFirst(said[0]!)}.`, priority: 2, paragraph: 0 });
    } else if (said.length === 1) {
      parts.push({ kind: 'pain', text: `${v === 1 ? 'What stayed with me' : 'The point that stood out'}: ${lowerFirst(said[0]!)}.`, priority: 2, paragraph: 0 });
    }
    const deadline = facts.deadlines[0];
    const timing = deadline ? ours(restate(deadline.text, DEADLINE_CLAUSE)) : '';
    if (wanted(timing)) parts.push({ kind: 'deadline', text: `On timing: ${lowerFirst(timing)}.`, priority: 3, paragraph: 1 });
    const condition = facts.conditions
      .filter((c) => !pains.some((p) => p.text === c.text) && c.text !== deadline?.text)
      .map((c) => ours(restate(c.text, CONDITION)))
      .find((c) => !/^(?:send|show|copy|loop|he|she|they|it|if|fine|okay)\b/i.test(c) && c.split(' ').length >= 4 && wanted(c) && !DANGLING_OBJECT.test(c));
    if (condition) parts.push({ kind: 'condition', text: `Noted, too: ${lowerFirst(condition)}.`, priority: 5, paragraph: 1 });
  }
  const commitments = facts.commitments.filter((c) => c.who === 'rep');
  commitments.forEach((c, i) => {
    const text = commitmentText(c, facts.stakeholders);
    parts.push({ kind: 'commitment', text: `${i === 0 ? 'As promised: ' : ''}${i === 0 ? lowerFirst(text).replace(/^i’ll/, 'I’ll') : text}.`, priority: 1, paragraph: 2 });
  });
  if (facts.notNow) parts.push({ kind: 'close', text: 'No need to reply in the meantime.', priority: 4, paragraph: 3 });
  else parts.push({ kind: 'next', text: facts.nextStep ? nextStepText(facts.nextStep, style.formal) : proposal(facts), priority: 1, paragraph: 3 });
  return parts;
}

/** Sentences the reviewer asked for: "mention HIPAA" says what the call said about it, in our words. */
function mentionPart(request: string, facts: CallFacts, current: string): Part | null {
  const keys = keywords(request);
  if (keys.length === 0) return null;
  if (keys.every((k) => current.toLowerCase().includes(k))) return null;
  // "mention that the pilot outline is coming by Friday with the two references": mostly said already.
  if (keys.length > 2 && keys.filter((k) => current.toLowerCase().includes(k)).length * 2 >= keys.length) return null;
  const named = (s: { text: string }) => keys.filter((k) => s.text.toLowerCase().includes(k)).length;
  const hits = facts.sentences.filter((s) => named(s) > 0).sort((a, b) => named(b) - named(a) || a.index - b.index);
  const hit = hits.find((s) => !s.text.endsWith('?')) ?? hits[0];
  if (!hit) return null;
  const answer = hit.text.endsWith('?') ? facts.sentences.slice(hit.index + 1, hit.index + 3).find((s) => !s.text.endsWith('?')) : hit;
  const topic = request.replace(/^(?:that\s+)?(?:the|our|their|your)\s+/i, '').trim();
  // The reviewer's words are no heading: a topic of more than a few words is not named, its sentence says it.
  if (topic.split(/\s+/).length > 4) {
    if (!answer) return null;
    const said = answer.role === 'rep' ? answer.text.replace(/[.!?]+$/, '') : restate(answer.text, null);
    return { kind: 'mention', text: `${upperFirst(said)}.`, priority: 1, paragraph: 1 };
  }
  if (!answer) return { kind: 'mention', text: `On ${topic}: happy to go through it whenever suits you.`, priority: 1, paragraph: 1 };
  const clause = answer.role === 'rep'
    ? answer.text.replace(/[.!?]+$/, '').replace(/^(?:(?:understood|sure|yes|yeah|right|okay|ok|great|of course|absolutely)[,.!]?\s+)+/i, '')
    : restate(answer.text, keys.find((k) => answer.text.toLowerCase().includes(k)) ?? null);
  const about = new RegExp(keys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i').test(clause);
  const lowerFirst = (t: string): string => lowerFirstOf(t, namesOf(facts));
  return { kind: 'mention', text: about ? `On ${topic}, too: ${lowerFirst(clause)}.` : `On ${topic}: ${lowerFirst(clause)}.`, priority: 1, paragraph: 1 };
}

const FORMAL: Array<[RegExp, string]> = [
  [/\bI[’']ll\b/g, 'I will'], [/\bI[’']m\b/g, 'I am'], [/\bI[’']d\b/g, 'I would'], [/\bI[’']ve\b/g, 'I have'], [/\byou[’']re\b/gi, 'you are'],
  [/\byou[’']ve\b/gi, 'you have'], [/\byou[’']ll\b/gi, 'you will'], [/\byou[’']d\b/gi, 'you would'], [/\bwe[’']re\b/gi, 'we are'], [/\bwe[’']ll\b/gi, 'we will'],
  [/\bwe[’']d\b/gi, 'we would'], [/\bit[’']s\b/gi, 'it is'], [/\bthat[’']s\b/gi, 'that is'], [/\bthere[’']s\b/gi, 'there is'], [/\blet[’']s\b/gi, 'let us'],
  [/\bdon[’']t\b/gi, 'do not'], [/\bdoesn[’']t\b/gi, 'does not'], [/\bwon[’']t\b/gi, 'will not'], [/\bcan[’']t\b/gi, 'cannot'], [/\bisn[’']t\b/gi, 'is not'],
  [/\baren[’']t\b/gi, 'are not'], [/\bdidn[’']t\b/gi, 'did not'], [/\bwouldn[’']t\b/gi, 'would not'], [/\bhaven[’']t\b/gi, 'have not'], [/\bwasn[’']t\b/gi, 'was not'],
  [/\bthey[’']re\b/gi, 'they are'], [/\bhe[’']s\b/gi, 'he is'], [/\bshe[’']s\b/gi, 'she is'], [/\bwhat[’']s\b/gi, 'what is'], [/!/g, '.'],
];

function formalise(text: string): string {
  return FORMAL.reduce((t, [pattern, full]) => t.replace(pattern, (found) => (/^[A-Z]/.test(found) ? upperFirst(full) : full)), text)
    .replace(/^Thanks for/, 'Thank you for').replace(/^Thanks again for/, 'Thank you again for').replace(/^Good to speak/, 'It was good to speak');
}

/** Lower-case speech writes "roi" and "api": a rep writes them as the acronyms they are. */
const ACRONYM = /\b(?:roi|api|apis|crm|erp|sso|kpi|kpis|sla|csv|pdf|ai|hipaa|gdpr)\b/g;
const acronyms = (text: string): string => text.replace(ACRONYM, (word) => (word.endsWith('s') && word.length > 3 ? `${word.slice(0, -1).toUpperCase()}s` : word.toUpperCase()));

function render(parts: Part[], useShort: boolean): string {
  const paragraphs = new Map<number, string[]>();
  for (const p of parts) {
    const list = paragraphs.get(p.paragraph) ?? [];
    list.push(useShort && p.short ? p.short : p.text);
    paragraphs.set(p.paragraph, list);
  }
  return [...paragraphs.keys()].sort((a, b) => a - b).map((k) => paragraphs.get(k)!.join(' ')).join('\n\n');
}

function subjectOf(ctx: WriteContext, facts: CallFacts, style: Style): string {
  const company = companyOf(ctx);
  const step = facts.nextStep;
  const subject = facts.notNow
    ? `${company}: for when the timing is right`
    : step?.when
      ? `${upperFirst(step.what)} ${onWhen(step.when)}${facts.commitments.some((c) => c.who === 'rep') ? ', and what I’m sending' : ''}`
      : `Following up on our call, ${company}`;
  const variant = style.variant % 3;
  const varied = variant === 1 ? `Notes from our call, ${company}` : variant === 2 ? `Next steps with ${company}` : subject;
  const done = style.formal ? formalise(facts.notNow ? subject : varied) : facts.notNow ? subject : varied;
  // The company's name is the lead's, as anyone typed or imported it; the subject goes into a header: one line.
  const line = toOneLine(done) || 'Following up';
  return line.length <= 80 ? line : `${line.slice(0, 79).trimEnd()}…`;
}

const CLOSING_LINE = /^(?:best|kind|warm|cheers|regards|thanks|thank you|many thanks|sincerely|all the best|yours|talk soon|speak soon)\b[^.!?]{0,30}[,.!]?$/i;
const normal = (t: string): string => t.toLowerCase().replace(/[’']/g, "'").replace(/[^\p{L}\p{N}'%$€£]+/gu, ' ').trim();

/** The sentences of a body between its greeting and its sign-off. */
function sentencesOfBody(body: string): string[] {
  const paragraphs = body.replace(/\r\n?/g, '\n').slice(0, 20_000).split(/\n{2,}/);
  if (/^\s*(?:hi|hey|hello|dear|good (?:morning|afternoon))\b[^\n]{0,80}$/i.test(paragraphs[0] ?? '')) paragraphs.shift();
  const end = paragraphs.findIndex((p) => CLOSING_LINE.test(p.split('\n')[0]!.trim()) || /^--\s*$/m.test(p));
  return (end >= 0 ? paragraphs.slice(0, end) : paragraphs)
    .flatMap((p) => p.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+(?=[A-Z0-9"“])/))
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && s.length <= 400)
    .slice(0, 40);
}

/**
 * The sentences a person added in their edit (DESIGN §12: regenerate builds on the latest version, a person's edit
 * included): those of the edited version that none of our wordings has, nor mostly shares its words with, and that
 * the feedback does not ask to leave out.
 */
function addedByPerson(ctx: WriteContext, facts: CallFacts, style: Style): string[] {
  const previous = ctx.previousDraft;
  if (!previous || previous.origin !== 'edited') return [];
  const ours = [0, 1, 2].flatMap((variant) => sentencesOfBody(compose(ctx, facts, { ...readFeedback(null, null), variant }).body)).map(normal);
  const exact = new Set(ours);
  const wordSets = ours.map((s) => new Set(s.split(' ')));
  const omitted = style.omissions.flatMap(omissionTerms);
  return sentencesOfBody(previous.body).filter((sentence) => {
    const n = normal(sentence);
    if (!n || exact.has(n) || omitted.some((t) => t.test(sentence))) return false;
    const words = n.split(' ');
    // An edited sentence of ours (a word changed) is ours: the new version writes it afresh.
    return !wordSets.some((set) => words.filter((w) => set.has(w)).length >= 0.6 * words.length);
  }).slice(0, 5);
}

export function writeDraft(ctx: WriteContext): WriterOutput {
  const facts = readCallFacts(ctx.call.transcript, ctx.lead.name, ctx.senderName, ctx.lead.companyName);
  const style = readFeedback(ctx.feedback, ctx.previousDraft);
  const kept = addedByPerson(ctx, facts, style);
  const compose = (c: WriteContext, f: CallFacts, s: Style) => composeWith(c, f, s, kept);
  const draft = compose(ctx, facts, style);
  // A request that changed nothing, or a version the same as the one it replaces, still deserves a new draft.
  const unchanged = ctx.previousDraft ? ctx.previousDraft.body : ctx.feedback?.trim() ? compose(ctx, facts, readFeedback(null, null)).body : null;
  for (let i = 1; i < 3 && unchanged !== null && draft.body === unchanged; i++) {
    const next = compose(ctx, facts, { ...style, variant: style.variant + i });
    if (next.body !== unchanged) return next;
  }
  return draft;
}

function compose(ctx: WriteContext, facts: CallFacts, style: Style): WriterOutput {
  return composeWith(ctx, facts, style, []);
}

function composeWith(ctx: WriteContext, facts: CallFacts, style: Style, kept: string[]): WriterOutput {
  const said = new SaidIndex(facts.sentences.map((s) => s.text));
  const protectedWord = (w: string): boolean => /\d/.test(w) || /^[A-Z]/.test(w) && w !== 'The' && w !== 'A' && w !== 'Our' && w !== 'Your' && w !== 'And';

  const ours = (text: string) => inOurWords(text, said, protectedWord, true);
  let parts = partsOf(ctx, facts, style, ours);
  for (const omission of style.omissions) {
    const terms = omissionTerms(omission);
    parts = parts.flatMap((p) => {
      if (!terms.some((t) => t.test(p.text))) return [p];
      if (p.kind !== 'commitment') return [];
      // A commitment loses only the item the reviewer dropped: "X and the pricing" keeps X.
      const kept = p.text.replace(/[.]$/, '').split(/,?\s(?:and|plus)\s|,\s/).filter((item) => !terms.some((t) => t.test(item)));
      return kept.length > 0 && /I’ll/.test(kept.join(' ')) ? [{ ...p, text: `${kept.join(', and ')}.` }] : [];
    });
  }
  for (const mention of style.mentions) {
    const part = mentionPart(mention, facts, render(parts, false));
    if (part) parts.splice(Math.min(2, parts.length), 0, part);
  }
  if (style.lead) {
    const keys = keywords(style.lead);
    const score = (p: Part) => keys.filter((k) => p.text.toLowerCase().includes(k)).length;
    const best = parts.filter((p) => p.kind !== 'open').sort((a, b) => score(b) - score(a))[0];
    const led = best && score(best) > 0 ? best : mentionPart(style.lead, facts, '');
    if (led) {
      parts = parts.filter((p) => p !== led && p.kind !== 'open');
      parts.unshift({ ...led, text: upperFirst(led.text.replace(/^As promised: /, 'First, as promised: ').replace(/^Noted, too: /, '')), paragraph: -1, priority: 0 });
    }
  }
  // A sentence the guard had to shorten still ends as one; one it had to drop goes, unless a promise or the next step.
  const guarded = (text: string): string => {
    const done = inOurWords(text, said, protectedWord);
    return done === text || done === '' ? done : /[.!?]$/.test(done) ? done : `${done}.`;
  };
  // A promise is never cut to its date ("As promised: by Friday."): it is said another way, or kept as it was said.
  const promise = (text: string): string => {
    for (const form of [text, text.replace(/\bI[’']ll\b/, 'I’m going to')]) {
      const done = guarded(form);
      if (done === form || (done !== '' && done.split(/\s+/).length >= form.split(/\s+/).length - 3)) return done;
    }
    return text;
  };
  parts = parts.flatMap((p) => {
    const text = p.kind === 'commitment' ? promise(p.text) : guarded(p.text);
    if (text === '' && p.kind !== 'commitment' && p.kind !== 'next') return [];
    return [{ ...p, text: text || p.text, short: p.short && (guarded(p.short) || undefined) }];
  });
  // The person's own sentences, as they wrote them, before the next step; dropped for length before a commitment.
  if (kept.length > 0) parts.push({ kind: 'kept', text: kept.join(' '), priority: 2, paragraph: 2.5 });
  parts = parts.map((p) => ({ ...p, text: acronyms(p.text), short: p.short && acronyms(p.short) }));
  if (style.formal) parts = parts.map((p) => ({ ...p, text: formalise(p.text), short: p.short && formalise(p.short) }));

  const limit = Math.min(style.wordLimit ?? Infinity, facts.notNow ? NOT_NOW_LIMIT : DEFAULT_LIMIT);
  const first = firstNameOf(ctx.lead.name);
  const greeting = style.formal ? `Dear ${ctx.lead.name.trim() || 'Sir or Madam'},` : `${style.casual ? 'Hey' : 'Hi'} ${first ?? 'there'},`;
  const sign = signature(ctx, style);
  const compose = (ps: Part[], useShort: boolean) => `${greeting}\n\n${render(ps, useShort)}\n\n${sign}`;
  let body = compose(parts, false);
  // Over the limit: the shorter forms, then the least needed parts, never a commitment or the next step.
  for (let level = 0; bodyWords(body) > limit && level < 8; level++) {
    if (level === 0) body = compose(parts, true);
    else {
      const droppable = parts.filter((p) => p.priority >= 2).sort((a, b) => b.priority - a.priority)[0];
      if (!droppable) break;
      parts = parts.filter((p) => p !== droppable);
      body = compose(parts, true);
    }
  }
  if (bodyWords(body) > limit) {
    // Tighter still: the proposal as one question, the commitments without "As promised:".
    parts = parts.map((p) => (p.kind === 'next' && !facts.nextStep ? { ...p, text: p.text.replace(/\?\s.*$/, '?'), short: undefined } : p));
    parts = parts.map((p) => (p.kind === 'commitment' ? { ...p, text: upperFirst(p.text.replace(/^As promised: /, '').replace(/^First, as promised: /, '')) } : p));
    body = compose(parts, true);
  }
  if (bodyWords(body) > limit) {
    parts = parts.map((p) => (p.kind === 'next' && facts.nextStep ? { ...p, text: p.text.replace(/^Looking forward to /, '').replace(/^I look forward to /, '').replace(/^./, (c) => c.toUpperCase()) } : p));
    // Still over: the opening line goes too (it read `keep || fits ? …`, which kept it exactly when it had to go).
    parts = parts.filter((p) => p.kind !== 'open');
    body = compose(parts, true);
  }
  if (bodyWords(body) > limit && !facts.nextStep) {
    // The proposal at its shortest: the commitments are what the words are kept for.
    parts = parts.map((p) => (p.kind === 'next' ? { ...p, text: style.formal ? 'Could we speak next week?' : 'Could we talk next week?' } : p));
    body = compose(parts, true);
  }
  return { engine: 'offline', subject: subjectOf(ctx, facts, style), body: body.slice(0, 5000) };
}
