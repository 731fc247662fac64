// The points a follow-up may make (DESIGN §13): what the call, the analysis and the research hold, each in our words,
// and which of them the earlier touches of the thread already made. A point is compared by what it says, not by its
// sentence: a figure, or most of the content words, found in an earlier touch means the point was made.
import { isStopWord, stem, wordsOf } from '../claims.ts';
import { bodyText } from '../draft-checks.ts';
import { inOurWords, SaidIndex } from '../engines/offline/copying.ts';
import { CONDITION, MONTHS, type CallFacts, type Commitment } from '../engines/offline/facts.ts';
import { restate } from '../engines/offline/writing.ts';
import type { ResearchOutput } from '../../schemas/outputs.ts';

export type PointKind = 'pain' | 'deadline' | 'condition' | 'research';

export interface Point {
  kind: PointKind;
  /** The clause as the follow-up says it, in the second person, without a full stop: "your return rate is 27 percent". */
  text: string;
  /** How much it says about this buyer: a pain's weight on the call; higher is made first. */
  weight: number;
}

/** What the earlier touches said, read once: their words' stems and their numbers. */
export interface Said {
  stems: Set<string>;
  numbers: Set<string>;
}

/** An earlier touch is read this far: a touch the writer made is far shorter, a person's edit cannot grow the work. */
const TOUCH_READ_MAX = 6000;
const TOUCHES_READ_MAX = 12;
const POINTS_MAX = 12;

const SPELLED: Record<string, string> = {
  one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9', ten: '10', eleven: '11',
  twelve: '12', thirteen: '13', fourteen: '14', fifteen: '15', sixteen: '16', seventeen: '17', eighteen: '18', nineteen: '19',
  twenty: '20', thirty: '30', forty: '40', fifty: '50', sixty: '60', seventy: '70', eighty: '80', ninety: '90', hundred: '100',
};

/** "twenty-seven", "27", "$27,000" and "27k" all carry 27: the numbers a text names, as digits. */
function numbersIn(words: string[]): string[] {
  const out: string[] = [];
  for (const word of words) {
    const digits = /^\d[\d,.]*/.exec(word)?.[0].replace(/[,.]+$/, '').replace(/,/g, '');
    if (digits) out.push(digits);
    else if (SPELLED[word]) out.push(SPELLED[word]);
  }
  return out;
}

/** Words that say nothing of a point's content: the writer's own frame words too ("mentioned", "noted"). */
const FRAME = new Set(['mention', 'mentioned', 'noted', 'point', 'stood', 'stayed', 'thing', 'things', 'timing', 'call', 'around', 'about']);

function contentStems(words: string[]): string[] {
  return [...new Set(words.filter((w) => w.length > 2 && !/^\d/.test(w) && !isStopWord(w) && !FRAME.has(w) && !SPELLED[w]).map(stem))];
}

/** The earlier touches, subject and body without greeting and sign-off, as what was said. */
export function readEarlier(earlier: ReadonlyArray<{ subject: string; body: string }>): Said {
  const stems = new Set<string>();
  const numbers = new Set<string>();
  for (const touch of earlier.slice(0, TOUCHES_READ_MAX)) {
    const words = wordsOf(`${touch.subject.slice(0, 200)}\n${bodyText(touch.body.slice(0, TOUCH_READ_MAX))}`);
    for (const w of words) stems.add(stem(w));
    for (const n of numbersIn(words)) numbers.add(n);
  }
  return { stems, numbers };
}

/**
 * Whether an earlier touch made this point: one of its numbers (not a small one, which dates and counts share) is in
 * one, or half or more of its content words are.
 */
export function madeBefore(text: string, said: Said): boolean {
  const words = wordsOf(text);
  // A point with a figure is the figure's: "1,100 returns a month" is new beside "a return rate of 27 percent".
  const figures = numbersIn(words).filter((n) => Number(n) > 12 || /\D/.test(n));
  if (figures.length > 0) return figures.some((n) => said.numbers.has(n));
  const content = contentStems(words);
  if (content.length === 0) return true;
  const found = content.filter((s) => said.stems.has(s)).length;
  return found * 2 >= content.length;
}

const DEADLINE_CLAUSE = new RegExp(String.raw`\b(?:until|by|before|start|go-live|go live|opening|live|launch\w*|deadline)\b.{0,40}\b(?:${MONTHS}|Q[1-4])\b|\b(?:${MONTHS})\s\d{1,2}\b`, 'i');
/** A clause that leans on one before it says nothing alone: "it cost…", "see it in writing". */
const DANGLING = /^(?:it|that|this|they|them|those|these|if|send|show|copy|loop|he|she|fine|okay|and|but|so|or)\b|\b(?:see|need|want|have|get|put|read|show|like|with|help with)\s(?:it|that|this|them)\b|^you mentioned (?:if|nothing|it|that|no)\b|^(?:no|yes|yeah|okay|ok)\b|\b(?:it|that|this|them|those|line|and|or)$|\bthat['’]s fine\b|\b(?:works|work for)\b/i;
/** What a pronoun swap can garble ("walk you through you theirs"): such a clause is not said. */
const GARBLED = /\byou\s(?:you|theirs|ours|yours)\b|\bthrough you\b|\bus\s(?:we|us)\b/i;
/** Lower-case speech writes "sap" and "roi": a rep writes them as the acronyms they are. */
const ACRONYM = /\b(?:roi|api|apis|crm|erp|sap|aws|sso|kpi|kpis|sla|csv|pdf|hipaa|gdpr|baa)\b/g;
const IF_THEN = /^if\b[^,]{3,80},\s(?:you|it|that|we)\S*\s\S/i;
/** A clause worth a follow-up of its own: a figure, or a problem named. */
const DETAIL = /\d|\b(?:manual(?:ly)?|by hand|spreadsheets?|screenshots?|phone and e-?mail|mess|problem|stale|fraud|disputes?|threshold|monitoring|fines?|losing|lose|lost|cost\w*|overtime|backlog|delays?|errors?|churn|refunds?|no-shows?|doesn['’]t help|can['’]t|cannot|proposal|quote)\b/i;
const CLAUSE_BREAK = /,\s(?:and|but|so|plus)\s|;\s|\s(?:but|because|so)\s|\.\s/i;
/** Buyer sentences read for further clauses: a call has a few hundred; a hostile transcript is read no further. */
const CLAUSE_SENTENCES_MAX = 2000;

const SPELLED_OR_DIGIT = /\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty|hundred|thousand|million|half|third|quarter|dozen)\b/i;

/**
 * Every point the call and the research offer, best first within each kind: the buyer's pains (by their weight),
 * their deadlines, their conditions, then what the company's website says. Each is said in our words: no run of
 * 8 words from the call (copying.ts), and a pain keeps its figure or is left out.
 */
export function pointsOf(facts: CallFacts, research: ResearchOutput | undefined): Point[] {
  const said = new SaidIndex(facts.sentences.map((s) => s.text));
  const keep = (w: string): boolean => /\d/.test(w) || (/^[A-Z]/.test(w) && !/^(?:The|A|Our|Your|And)$/.test(w));
  const ours = (text: string): string => {
    const done = inOurWords(text, said, keep, true).replace(/[,;:\s]+$/, '')
      .replace(/^(you mentioned )(Most|Some|All|Every|Each|Our|Your|The|A|An|It|That|This|There)\b/, (_m, head: string, word: string) => `${head}${word.toLowerCase()}`);
    // A clause the copy guard had to cut to its first words ("nothing went") no longer says its point.
    return done.split(/\s+/).length * 10 >= text.split(/\s+/).length * 7 ? done : '';
  };
  const usable = (text: string, kind: PointKind): boolean => text.split(/\s+/).length >= 4 && text.split(/\s+/).length <= 24 && !GARBLED.test(text) &&
    // A condition may be said as one: "if onboarding takes more than a week, you're out".
    (!DANGLING.test(text) || (kind === 'condition' && IF_THEN.test(text) && !DANGLING.test(text.slice(text.indexOf(',') + 1).trim())));
  const points: Point[] = [];
  const names = namesOf(facts);
  const add = (kind: PointKind, raw: string, weight: number): void => {
    // "Budget is approved" is said after a colon as "budget is approved"; "Visa's threshold" keeps its capital.
    // A word whose next word is capitalised too ("Northwind Supply") is part of a name; a website's fact keeps its own.
    const first = /^\p{Lu}\p{Ll}+(?=[\s,])(?!\s\p{Lu})/u.exec(raw)?.[0];
    const text = (first && kind !== 'research' && !names.has(first) ? raw.charAt(0).toLowerCase() + raw.slice(1) : raw).replace(ACRONYM, (word) => word.toUpperCase());
    // The same fact twice is one point: a later clause that an earlier point already says is left out.
    if (!usable(text, kind) || points.some((p) => p.text === text)) return;
    if (points.length > 0 && madeBefore(text, saidBy(points))) return;
    points.push({ kind, text, weight });
  };
  for (const pain of facts.pains) {
    const text = ours(restate(pain.text, pain.figure, pain.note));
    // A pain the copy guard could only tell without its figure is not the pain.
    if (!pain.figure || SPELLED_OR_DIGIT.test(text)) add('pain', text, pain.score);
  }
  for (const deadline of facts.deadlines) add('deadline', ours(restate(deadline.text, DEADLINE_CLAUSE)), 3.5);
  // "Show me the connectors working" is what the buyer wants to see.
  for (const condition of facts.conditions) add('condition', ours(restate(condition.text, CONDITION).replace(/^show you\b/i, 'you want to see')), 4);
  // Besides the weighed pains, each clause of the buyer's that carries a figure or names a problem.
  for (const sentence of facts.sentences.slice(0, CLAUSE_SENTENCES_MAX)) {
    if (sentence.role === 'rep' || sentence.text.endsWith('?')) continue;
    const said: Array<{ text: string; weight: number } | null> = sentence.text.split(CLAUSE_BREAK).slice(0, 4).map((clause) => {
      const length = clause.split(/\s+/).length;
      // A clause restate() would cut to its first words is left whole or not at all.
      if (!DETAIL.test(clause) || length < 4 || length > 16) return null;
      const text = ours(restate(clause, null));
      return usable(text, 'pain') ? { text, weight: /\d/.test(clause) ? 3.5 : 3 } : null;
    });
    for (let i = 0; i < said.length; i++) {
      const clause = said[i];
      if (!clause) continue;
      // "Visa's threshold is 0.9" says more with the clause that followed it: "…, and you're in their monitoring program".
      const next = said[i + 1];
      const joined = next && clause.text.split(/\s+/).length <= 6 ? `${clause.text}, and ${lowerStart(next.text)}` : null;
      if (joined && joined.split(/\s+/).length <= 20 && ours(joined) === joined) {
        add('pain', joined, Math.max(clause.weight, next!.weight) + 0.5);
        i++;
      } else add('pain', clause.text, clause.weight);
    }
  }
  for (const fact of research?.facts.slice(0, 8) ?? []) {
    const text = fact.text.replace(/\s+/g, ' ').trim().replace(/[.!?]+$/, '');
    if (text.length <= 160) add('research', text, 2);
  }
  return points.slice(0, POINTS_MAX);
}

/** The words a call capitalises mid-sentence: names, which keep their capital wherever a point starts. */
function namesOf(facts: CallFacts): Set<string> {
  const names = new Set<string>();
  for (const s of facts.sentences.slice(0, CLAUSE_SENTENCES_MAX)) {
    for (const m of s.text.slice(0, 2000).matchAll(/(?<=[\p{L}\p{N},;)]\s)\p{Lu}[\p{L}'’-]*/gu)) names.add(m[0].replace(/['’]s$/, ''));
  }
  return names;
}

const lowerStart = (t: string): string => (/^(?:You|Your|The|It|That|This|There|About|Around)\b/.test(t) ? t.charAt(0).toLowerCase() + t.slice(1) : t);

function saidBy(points: Point[]): Said {
  return readEarlier([{ subject: '', body: points.map((p) => `${p.text}.`).join('\n\n') }]);
}

/** The rep's promise of something to send or share ("the case study", "the one-pager"): a resource to point to. */
export function promisedResource(commitments: readonly Commitment[]): string | null {
  for (const c of commitments) {
    if (c.who !== 'rep') continue;
    const thing = /\b(?:send|share|forward|put together|prepare|draft|write)\s(?:you\s|over\s|across\s)?((?:the|our|a|an|some)\s[^,;]{3,60}?)(?=,|;|\s(?:plus|and|with|for|to|so|by|before|today|tomorrow)\b|$)/i.exec(c.what);
    if (thing) return thing[1]!.replace(/^(?:a|an|some)\s/i, 'the ').replace(/^our\s/i, 'the ');
  }
  return null;
}
