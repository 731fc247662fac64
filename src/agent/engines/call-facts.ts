// The concrete facts of a call, read by rules: the figures and what they measure, dates and deadlines, the people
// named with their roles, the tools in use, the budget and timing signals, and every promise the rep made. A draft
// that carries these reads as written by someone who was on the call. The input is a stranger's transcript: every
// pattern here reads a sentence of at most a few hundred characters once, with no nested repetition, and every
// list is capped, so the work stays linear in the transcript (DESIGN §10).
import type { KeyFacts } from '../../schemas/outputs.ts';

export interface SpokenSentence {
  role: 'rep' | 'prospect' | 'note';
  /** The sentence cleaned of fillers, as the ANALYSIS keeps it. */
  text: string;
}

/** At most this many of each kind: a draft uses a handful, and a hostile transcript must not grow the output. */
const MAX_EACH = 8;

const MONTHS = 'January|February|March|April|May|June|July|August|September|October|November|December';
const NUMBER_WORDS = 'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred|half a';
/** A figure with its unit or the thing counted: "3%", "$45", "1,200 tickets", "€50k", "two hours", "four clinics". */
const FIGURE = new RegExp(
  String.raw`(?:[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion)\b)?|\b\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|k\b|m\b)|(?<!(?:${MONTHS})\s)\b\d[\d,]*(?:\.\d+)?(?!\d|[,.]\d|\s(?:${MONTHS})\b)(?:\s(?!(?:and|or|but|to|the|a|an|of|in|on|for|at|by|is|are|was|were|so|if|it|${MONTHS})\b)[a-z][a-z-]{1,20}){0,2}|\b(?:${NUMBER_WORDS})\s(?:hours?|days?|weeks?|months?|years?|minutes?|[a-z]{3,20}s)\b)`,
  'gi',
);
/** Not a figure worth repeating: times of day and bare list numbers. */
const NOT_A_FIGURE = /^\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|^\d{1,2}:\d{2}/i;

/** Dates and deadlines: "by the end of the month", "March 12", "in October", "Q3", "before tax season in January". */
const DATE = new RegExp(
  String.raw`\b(?:(?:by|before|until|in|on|after|from|for|around|at)\s)?(?:the\s)?(?:(?:${MONTHS})(?:\s\d{1,2}(?:st|nd|rd|th)?\b)?|\d{1,2}(?:st|nd|rd|th)?\s(?:${MONTHS})|Q[1-4]\b|end of (?:the\s)?(?:week|month|quarter|year)|(?:next|this|last) (?:week|month|quarter|year|financial year|fiscal year)|new (?:financial|fiscal) year|(?:peak|tax|busy|holiday) season|Black Friday|(?:Monday|Tuesday|Wednesday|Thursday|Friday)(?:\sthe\s\d{1,2}(?:st|nd|rd|th)?)?)`,
  'g',
);
/** What makes a sentence a budget or timing signal, said by the prospect's side. */
const BUDGET_OR_TIMING =
  /\b(?:budget|approved|set aside|signs? off|sign off|decision|decide|deadline|go[- ]live|live (?:by|before)|final call|approves?|quotes?|procurement|board meeting|review is)\b/i;

const ROLE =
  String.raw`(?:CEO|CFO|COO|CTO|CIO|CMO|CRO|CISO|CPO|founder|co-founder|owner|president|(?:managing|senior) partner|(?:VP|vice president|head|director) of [A-Za-z]{2,20}|(?:practice|plant|office|project|product|operations|ops|sales|IT|finance|procurement|marketing|engineering|general|account|HR|support|warehouse|facilities|admissions|security) (?:manager|lead|director|head)|controller|director|manager)`;
/** A person's name: one or two capitalised words ("Daniel", "Ingrid Holm"). */
const NAME = String.raw`([A-Z][a-z’'-]{1,20}(?: [A-Z][a-z’'-]{1,20})?)`;
const PEOPLE: Array<{ pattern: RegExp; name: number; role: number | null }> = [
  // "Daniel, our COO", "Sarah Lee, our practice manager"
  { pattern: new RegExp(String.raw`${NAME},? (?:our|my|their|the) (${ROLE})\b`, 'g'), name: 1, role: 2 },
  // "our plant manager, Ingrid Holm", "My director, Karen Wu"
  { pattern: new RegExp(String.raw`\b(?:[Oo]ur|[Mm]y|[Tt]heir|[Tt]he) (${ROLE}),? ${NAME}\b`, 'g'), name: 2, role: 1 },
  // "Marco from IT", "Priya from finance"
  {
    pattern: new RegExp(String.raw`${NAME} (from (?:IT|HR|finance|procurement|legal|security|operations|ops|marketing|sales|engineering|compliance|the [a-z]{2,20} team))\b`, 'g'),
    name: 1, role: 2,
  },
];
/** Capitalised words that are never a person's name here. */
const NOT_A_NAME = new Set([
  'I', 'We', 'Our', 'My', 'The', 'They', 'Their', 'And', 'But', 'So', 'Yes', 'No', 'Thanks', 'Great', 'Sure', 'Honestly',
  'Well', 'Okay', 'Ok', 'Also', 'Then', 'If', 'When', 'Budget', 'Procurement', 'Maintenance', 'Security',
]);

/** Systems a call names: software that people run their work on, and the spreadsheets and paper they fall back on. */
const TOOLS = new RegExp(
  String.raw`\b(?:Salesforce|HubSpot|NetSuite|SAP|Oracle|Workday|Zendesk|Freshdesk|Intercom|ServiceNow|Jira|Confluence|Asana|Trello|Notion|Airtable|Slack|Microsoft Teams|Zoom|Excel|Google Sheets?|Google Drive|QuickBooks|Xero|Sage|Dynamics(?: 365)?|Pipedrive|Zoho|Marketo|Mailchimp|Klaviyo|Shopify(?: Plus)?|Magento|WooCommerce|Stripe|Tableau|Looker|Power BI|Snowflake|Epic|Cerner|Slate|Gong|Salesloft|Outreach|ADP|Gusto|BambooHR|Greenhouse|SharePoint|Dropbox|DocuSign|Concur|Coupa|Ariba|Procore|Outlook|Gmail|Monday\.com|Odoo|Infor|Kronos|spreadsheets?)\b`,
  'g',
);
/** A word with a capital inside ("HubSpot", "PowerApps"): almost always a product name. */
const CAMEL = /\b[A-Z][a-z]+[A-Z][A-Za-z]*\b/g;

/** "I’ll send a pilot outline by Friday": the rep's promise, the words after its "I’ll". */
const PROMISE = /^(?:(?:and|so|also|then)\s)?(?:I['’]ll|I will|I['’]m going to|I am going to|we['’]ll|we will|let me)\s(?:also\s|then\s|just\s)?/i;
const NEXT_PROMISE = /,?\s(?:and|then)\s(?:I['’]ll|I will|we['’]ll|we will)\s(?:also\s)?|;\s(?:I['’]ll|I will|we['’]ll|we will)\s(?:also\s)?/i;
/** A promise that names nothing ("I'll send it over", "I'll do that") tells the reader nothing. */
const VAGUE_PROMISE = /^\w+(?:\s(?:over|across|through))?\s(?:it|that|this|them|those|something|things?|everything|anything)\b|^(?:do|check|think|see|try)\b/i;

function push(list: string[], item: string, seen: Set<string>): void {
  const key = item.toLowerCase();
  if (list.length >= MAX_EACH || seen.has(key)) return;
  seen.add(key);
  list.push(item);
}

/** Every sentence's facts, found once; the ANALYSIS output keeps a capped list of each kind. */
export function readFacts(sentences: readonly SpokenSentence[]): KeyFacts {
  const facts: KeyFacts = { figures: [], dates: [], people: [], tools: [], budgetAndTiming: [], commitments: [] };
  const seen = { figures: new Set<string>(), dates: new Set<string>(), people: new Set<string>(), tools: new Set<string>(), timing: new Set<string>(), commitments: new Set<string>() };

  for (const sentence of sentences) {
    const { text, role } = sentence;
    // Call notes are written by the rep: an "I'll …" in them is the rep's promise too.
    const promises = role === 'prospect' ? [] : promisesIn(text);
    if (role === 'rep' || promises.length > 0) {
      for (const promise of promises) push(facts.commitments, promise, seen.commitments);
    } else {
      for (const match of text.matchAll(FIGURE)) {
        const value = match[0].trim();
        if (NOT_A_FIGURE.test(value) || facts.figures.length >= MAX_EACH || seen.figures.has(value.toLowerCase())) continue;
        seen.figures.add(value.toLowerCase());
        facts.figures.push({ value, about: text });
      }
      for (const match of text.matchAll(DATE)) push(facts.dates, match[0].trim(), seen.dates);
      if (BUDGET_OR_TIMING.test(text) || DATE.test(text)) push(facts.budgetAndTiming, text, seen.timing);
      DATE.lastIndex = 0;
    }
    for (const match of text.matchAll(TOOLS)) push(facts.tools, match[0], seen.tools);
    for (const match of text.matchAll(CAMEL)) push(facts.tools, match[0], seen.tools);
    for (const { pattern, name, role: roleAt } of PEOPLE) {
      for (const match of text.matchAll(pattern)) {
        const person = match[name]!;
        if (NOT_A_NAME.has(person.split(' ')[0]!) || facts.people.length >= MAX_EACH || seen.people.has(person.toLowerCase())) continue;
        seen.people.add(person.toLowerCase());
        facts.people.push({ name: person, role: roleAt === null ? null : match[roleAt]!, side: role === 'rep' ? 'rep' : 'prospect' });
      }
    }
  }
  return facts;
}

/** Whether a sentence is a promise ("I'll send …"), whoever wrote it down. */
export function isPromise(text: string): boolean {
  return PROMISE.test(text);
}

/** The promises in one of the rep's sentences, each as "I’ll …": "I’ll send X, and I’ll share Y" is two. */
export function promisesIn(text: string): string[] {
  const head = PROMISE.exec(text);
  if (!head) return [];
  const promises: string[] = [];
  let rest = text.slice(head[0].length);
  // A sentence holds a few promises at most; the cap bounds the work on one that repeats "and I'll" forever.
  for (let i = 0; i < 4 && rest; i++) {
    const next = NEXT_PROMISE.exec(rest);
    const action = (next ? rest.slice(0, next.index) : rest).replace(/[.!…\s]+$/, '').trim();
    if (action && !VAGUE_PROMISE.test(action) && action.split(' ').length >= 2) promises.push(`I’ll ${action}`);
    rest = next ? rest.slice(next.index + next[0].length) : '';
  }
  return promises;
}

/** How many of the call's facts a sentence carries: a figure, a date, a person, a tool or a budget/timing cue. */
export function factWeight(text: string, facts: KeyFacts): number {
  let weight = 0;
  FIGURE.lastIndex = 0;
  for (const match of text.matchAll(FIGURE)) if (!NOT_A_FIGURE.test(match[0].trim())) weight++;
  for (const _ of text.matchAll(DATE)) weight++;
  for (const person of facts.people) if (text.includes(person.name)) weight += 2;
  for (const tool of facts.tools) if (text.includes(tool)) weight++;
  if (BUDGET_OR_TIMING.test(text)) weight++;
  return weight;
}
