// Who sells and who buys. The rep is the run's sender (by full or first name), a label that speaks for our side
// ("REP", "Sales", "Me"), or a numbered speaker who introduces themselves by the sender's first name. The buyer is the
// lead, anyone of the lead's company, a label for their side, and, when the call has two sides only, whoever is not
// on the rep's. Anyone else is 'unknown': a partner, an interpreter, a third company.
import { fold, labelKind } from './labels.ts';
import type { People, SpeakerRole } from './types.ts';

export interface SpeakerFacts {
  label: string;
  name: string | null;
  company: string | null;
  /** The first few things they said, raw: where a numbered speaker introduces themselves. */
  opening: string;
  /** How much what they said sounds like the one selling (`sellerCues`, summed over their turns). */
  seller: number;
  /** Questions and sentences they said: the seller asks. */
  questions: number;
  sentences: number;
}

// What the one selling says: an introduction with their company, a pitch or a proposal, thanks for the buyer's time,
// a promise to send or set something up.
const INTRODUCES = /\b(?:this is|it['’]s|i['’]m|my name is)\s+\p{L}+\s+(?:from|with|at)\s|^(?:hi|hello|hey)\b[^.]{0,40}\b\p{L}+ from \p{Lu}/iu;
const PITCHES = new RegExp(String.raw`\b(?:we help|our (?:customers|clients)|(?:customers|clients|brands|teams|clinics|firms|retailers) `
  + String.raw`(?:we work with|like you)|we['’]d be|for your (?:traffic|size|team)|thanks for (?:having me|taking|picking up|fitting me|`
  + String.raw`making (?:the )?time|the time|jumping on)|what i['’]d (?:suggest|propose)|here['’]s what i['’]d)\b`, 'i');
const PROMISES = /\bi['’]ll (?:send|share|put together|set up|introduce|bring|run|get you)\b/i;

/** How much one turn (its first few hundred characters) sounds like the seller; `early`: among the call's first. */
export function sellerCues(text: string, early: boolean, leadFirst: string | null): number {
  let score = 0;
  if (early && leadFirst && greets(text, leadFirst)) score += 3;
  if (INTRODUCES.test(text)) score += 3;
  if (PITCHES.test(text)) score += 1;
  if (PROMISES.test(text)) score += 1;
  return score;
}

/** Legal forms that spellings of one company differ by: "Whitcombe Legal LLP" is "Whitcombe Legal". */
const LEGAL_FORM = /\b(inc|llc|llp|ltd|limited|gmbh|ag|sa|sas|bv|nv|plc|corp|corporation|co|company|oy|ab|srl|pty)\.?$/;

export function companyKey(company: string | null): string | null {
  if (!company) return null;
  const key = fold(company).replace(/[.,]/g, ' ').replace(/\s+/g, ' ').trim().replace(LEGAL_FORM, '').trim();
  return key || null;
}

/** "Feld, Marcus" as Teams writes it is "Marcus Feld". */
function personKey(name: string): string {
  const folded = fold(name);
  const comma = folded.indexOf(',');
  return comma < 0 ? folded : `${folded.slice(comma + 1).trim()} ${folded.slice(0, comma).trim()}`;
}

function firstName(name: string | null): string | null {
  if (!name) return null;
  return personKey(name).replace(/^(?:dr|mr|mrs|ms|prof)\.?\s+/, '').split(' ')[0] || null;
}

/** Words before a first name that introduce oneself: "this is Jonas", "I'm Jonas", "my name is Jonas". */
const INTRO_BEFORE = new Set(['is', 'im', 'i\'m', 'i’m', 'am', 'its', 'it\'s', 'it’s', 'names', 'name\'s', 'name’s']);

/** Whether `opening` has its speaker say they are `first`: "this is luis from sensorline", "Jonas here". */
export function introducesAs(opening: string, first: string): boolean {
  const words = fold(opening.slice(0, 400)).split(/[^\p{L}'’]+/u);
  for (let i = 0; i < words.length; i++) {
    if (words[i] !== first) continue;
    const before = words[i - 1] ?? '';
    const after = words[i + 1] ?? '';
    if (INTRO_BEFORE.has(before) || after === 'here' || (after === 'from' && i > 0 && before !== 'hi')) return true;
  }
  return false;
}

/** Greetings a speaker opens with before the name of whom they speak to: "hi janet", "thanks for the time, janet". */
const GREETINGS = new Set(['hi', 'hello', 'hey', 'morning', 'afternoon', 'evening', 'thanks', 'thank']);

/** Whether `opening` greets `first` within its first words: its speaker is talking to them, so is not them. */
export function greets(opening: string, first: string): boolean {
  const words = fold(opening.slice(0, 120)).split(/[^\p{L}'’]+/u).filter(Boolean).slice(0, 8);
  const at = words.indexOf(first);
  return at > 0 && words.slice(0, at).some((word) => GREETINGS.has(word));
}

export function leadFirstName(people: People): string | null {
  return firstName(people.leadName);
}

export function assignRoles(speakers: SpeakerFacts[], people: People): SpeakerRole[] {
  const sender = people.senderName ? personKey(people.senderName) : null;
  const lead = personKey(people.leadName);
  const senderFirst = firstName(people.senderName);
  const leadFirst = firstName(people.leadName);
  // A first name that both have tells nobody apart.
  const firstsDiffer = senderFirst !== leadFirst;
  const leadCompany = companyKey(people.leadCompany);
  const roles: SpeakerRole[] = speakers.map((speaker) => {
    const kind = labelKind(speaker.label);
    if (kind === 'rep') return 'rep';
    if (kind === 'buyer') return 'buyer';
    const name = speaker.name ? personKey(speaker.name) : null;
    if (name !== null && name === sender) return 'rep';
    if (name !== null && name === lead) return 'buyer';
    if (leadCompany !== null && companyKey(speaker.company) === leadCompany) return 'buyer';
    const first = firstName(speaker.name);
    if (first !== null && firstsDiffer && first === senderFirst && !(name?.includes(' ') && sender?.includes(' '))) {
      return 'rep';
    }
    if (first !== null && firstsDiffer && first === leadFirst && !(name?.includes(' ') && lead.includes(' '))) {
      return 'buyer';
    }
    if (name === null && senderFirst && firstsDiffer && introducesAs(speaker.opening, senderFirst)) return 'rep';
    if (name === null && leadFirst && firstsDiffer && introducesAs(speaker.opening, leadFirst)) return 'buyer';
    // Of two nameless speakers, the one who greets the lead by name is talking to the lead: the one selling.
    if (name === null && leadFirst && speakers.length === 2 && greets(speaker.opening, leadFirst)) return 'rep';
    return 'unknown';
  });
  return bySides(speakers, bySound(speakers, roles));
}

/**
 * With no one known to sell, the speaker who most sounds like it (introduces themselves with their company, thanks the
 * buyer for the time, pitches, promises to send things, asks the questions) is taken to: a call has one seller, and
 * a transcript that names no sender still has one.
 */
function bySound(speakers: SpeakerFacts[], roles: SpeakerRole[]): SpeakerRole[] {
  if (roles.includes('rep')) return roles;
  let best = -1;
  let bestRating = 0;
  speakers.forEach((speaker, i) => {
    if (roles[i] !== 'unknown') return;
    const rating = speaker.seller + (2 * speaker.questions) / Math.max(1, speaker.sentences);
    if (speaker.seller > 0 && rating > bestRating) {
      best = i;
      bestRating = rating;
    }
  });
  return best < 0 ? roles : roles.map((role, i) => (i === best ? 'rep' : role));
}

/**
 * The rest by sides: a colleague of a known rep's company sells too; and a call with two sides only (two companies
 * at most, or no companies given) has the buyer on the side that is not the rep's.
 */
function bySides(speakers: SpeakerFacts[], roles: SpeakerRole[]): SpeakerRole[] {
  const repCompanies = new Set<string>();
  const buyerCompanies = new Set<string>();
  const companies = new Set<string>();
  speakers.forEach((speaker, i) => {
    const key = companyKey(speaker.company);
    if (key === null) return;
    companies.add(key);
    if (roles[i] === 'rep') repCompanies.add(key);
    if (roles[i] === 'buyer') buyerCompanies.add(key);
  });
  const hasRep = roles.includes('rep');
  const hasBuyer = roles.includes('buyer');
  const twoSides = companies.size <= 2;
  return roles.map((role, i) => {
    if (role !== 'unknown') return role;
    const key = companyKey(speakers[i]!.company);
    if (key !== null && repCompanies.has(key) && !buyerCompanies.has(key)) return 'rep';
    if (key !== null && buyerCompanies.has(key) && !repCompanies.has(key)) return 'buyer';
    if (hasRep && twoSides && (key === null || !repCompanies.has(key))) return 'buyer';
    // Only the buyer known, and one other person: that one is selling.
    if (!hasRep && hasBuyer && speakers.length === 2) return 'rep';
    return 'unknown';
  });
}
