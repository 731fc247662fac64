// Reading a call's transcript: which format it is in, who said what on which line, and which side they are on.
// This file stands in for the shared transcript reader (src/agent/transcript/), with the same names and types; at
// merge its body becomes a re-export of that module, so everything else in the offline engine imports from here.
// Every pattern reads one line of bounded length once: the work is linear in the transcript (DESIGN §10).

export type TranscriptFormat = 'webvtt' | 'srt' | 'otter' | 'timestamped' | 'rep-prospect' | 'speaker-n' | 'labelled' | 'meet' | 'plain';
export type SpeakerRole = 'rep' | 'buyer' | 'unknown';

export interface Utterance {
  /** The transcript line the turn starts on, 1-based. */
  line: number;
  speaker: string | null;
  company: string | null;
  role: SpeakerRole;
  /** What was said, cleaned: no timestamps, cue numbers, voice tags, noise markers, fillers or stutters. */
  text: string;
}

export interface Speaker {
  label: string;
  name: string | null;
  company: string | null;
  role: SpeakerRole;
}

export interface Transcript {
  format: TranscriptFormat;
  utterances: Utterance[];
  speakers: Speaker[];
}

export interface ReadOptions {
  leadName: string;
  senderName: string | null;
  leadCompany: string | null;
}

/** A line longer than this is read only this far: no speaker's turn is longer, and a hostile one stays cheap. */
const LINE_MAX = 4000;

const TIME = String.raw`\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?`;
const CUE_TIMING = /-->/;
const CUE_NUMBER = /^\d{1,6}$/;
const TEAMS_CUE_ID = /^[0-9a-f]{8}-[0-9a-f-]{20,}(?:\/\d+-\d+)?$/i;
const BARE_TIME = new RegExp(String.raw`^[\[(]?${TIME}[\])]?$`);
/** Otter/Fireflies: "Helen Osei  0:05", the name and the time on one line, the text on the next. */
const OTTER_HEAD = new RegExp(String.raw`^([\p{L}][\p{L}.'’ -]{0,40}?)\s+[\[(]?${TIME}[\])]?$`, 'u');
/** "[00:03:12] Name (Company): text", "Name: text", "**Name**: text": the head of a speaker's line. */
const SPEAKER_HEAD = new RegExp(
  String.raw`^(?:[\[(]?${TIME}[\])]?\s*)?(?:\*\*)?([\p{L}][\p{L}\d.'’ -]{0,40}?)(?:\s*\(([^()]{1,60})\))?(?:\*\*)?\s*(?:[\[(]?${TIME}[\])]?\s*)?:(?:\s+|$)`,
  'u',
);
const VOICE_TAG = /^<v(?:\.[\w.-]+)?\s+([^>]{1,60})>/i;
const NOTE_LABELS = /^(note|notes|summary|next steps?|action items?|agenda|date|time|attendees|participants|title|subject|call|meeting|follow[- ]?ups?|pain points?|objections?|todo|to do|transcript|recording|webvtt|kind|language)$/i;
const REP_LABELS = /^(rep|sales|sales ?rep|sales ?person|salesperson|seller|account executive|ae|sdr|bdr|me|agent|host|us|vendor)$/i;
const BUYER_LABELS = /^(prospect|customer|client|lead|buyer|them|guest)$/i;

/** The format of a transcript, from its first few hundred lines. */
export function detectFormat(text: string): TranscriptFormat {
  const lines = text.slice(0, 20_000).split(/\r\n?|\n/).map((l) => l.trim()).filter(Boolean).slice(0, 300);
  if (lines.length === 0) return 'plain';
  if (/^WEBVTT\b/.test(lines[0]!) || lines.some((l) => VOICE_TAG.test(l))) return 'webvtt';
  if (lines.some((l) => /^\d{2}:\d{2}:\d{2},\d{3}\s*-->/.test(l))) return 'srt';
  if (lines.some((l) => CUE_TIMING.test(l))) return 'webvtt';
  const heads = lines.map((l) => SPEAKER_HEAD.exec(l)).filter((m): m is RegExpExecArray => m !== null && m[1]!.trim().split(/\s+/).length <= 4);
  if (heads.some((m) => /^\[?\d/.test(m[0]) && m[2])) return 'timestamped';
  if (heads.some((m) => /^\[?\d/.test(m[0]))) return 'timestamped';
  if (lines.filter((l) => OTTER_HEAD.test(l)).length >= 2) return 'otter';
  const labels = heads.map((m) => m[1]!.trim());
  if (labels.some((l) => /^speaker \d+$/i.test(l))) return 'speaker-n';
  if (labels.some((l) => REP_LABELS.test(l)) && labels.some((l) => BUYER_LABELS.test(l))) return 'rep-prospect';
  if (lines.some((l) => BARE_TIME.test(l)) && heads.length >= 2) return 'meet';
  if (new Set(labels.filter((l) => !NOTE_LABELS.test(l))).size >= 2) return 'labelled';
  return 'plain';
}

interface RawTurn {
  line: number;
  label: string | null;
  company: string | null;
  parts: string[];
}

/** The turns of a transcript: who spoke (a label, or null for notes), from which line, and what they said. */
function readTurns(text: string, format: TranscriptFormat): RawTurn[] {
  const turns: RawTurn[] = [];
  let current: RawTurn | null = null;
  let seenSpeaker = false;
  let index = 0;
  for (const raw of text.split(/\r\n?|\n/)) {
    index++;
    let line = raw.length > LINE_MAX ? raw.slice(0, LINE_MAX) : raw;
    line = line.trim();
    if (!line) continue;
    if (/^WEBVTT\b/.test(line) || /^NOTE\b/.test(line) || CUE_TIMING.test(line) || CUE_NUMBER.test(line) || TEAMS_CUE_ID.test(line) || BARE_TIME.test(line)) continue;
    if (/^(attendees|participants)\s*:/i.test(line) || /<>|\btranscript\b\s*$/i.test(line) && !seenSpeaker) continue;
    const otter = format === 'otter' ? OTTER_HEAD.exec(line) : null;
    if (otter) {
      current = { line: index + 1, label: otter[1]!.trim(), company: null, parts: [] };
      turns.push(current);
      seenSpeaker = true;
      continue;
    }
    const voice = VOICE_TAG.exec(line);
    if (voice) {
      current = { line: index, label: voice[1]!.trim(), company: null, parts: [line.slice(voice[0].length)] };
      turns.push(current);
      seenSpeaker = true;
      continue;
    }
    const head = SPEAKER_HEAD.exec(line);
    const label = head?.[1]?.trim();
    if (head && label && label.split(/\s+/).length <= 4 && !NOTE_LABELS.test(label)) {
      current = { line: index, label, company: head[2]?.trim() ?? null, parts: [line.slice(head[0].length)] };
      turns.push(current);
      seenSpeaker = true;
      continue;
    }
    // A line without a label continues the turn before it (an SRT cue's next line, a wrapped line); notes stand alone.
    if (current && current.label !== null) current.parts.push(line);
    else {
      current = { line: index, label: null, company: null, parts: [line] };
      turns.push(current);
    }
  }
  return turns;
}

const FILLER = /(?<![\p{L}'’])(?:um+|uh+m*|erm+|er|hm+|mm+|ah)(?![\p{L}'’])[,.]?/giu;
const NOISE = /\[(?:[^\]]{0,40})\]|\((?:inaudible|crosstalk|laughs?|laughter|silence|pause|unintelligible|music|noise)[^)]{0,20}\)/gi;
const DAY_OR_MONTH =
  /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|june|july|august|september|october|november|december)\b/g;

/** What was said, without markup, noise, fillers and stutters; lower-case speech recognition given its capitals. */
export function cleanSpoken(text: string): string {
  let out = text
    .replace(/<\/?[a-z][^>]{0,60}>/gi, ' ')
    .replace(NOISE, ' ')
    .replace(new RegExp(String.raw`[\[(]${TIME}[\])]`, 'g'), ' ')
    .replace(FILLER, ' ')
    // "can you can you", "the the": a word or two said twice.
    .replace(/\b(\w{1,30}(?:\s\w{1,30})?)(?:[,\s]{1,3}\1\b)+/gi, '$1')
    .replace(/\s+([,.!?;:])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  if (out && out === out.toLowerCase()) {
    out = out
      .replace(/\bi\b(?=(?:['’](?:m|ll|ve|d))?\b)/g, 'I')
      .replace(DAY_OR_MONTH, (w) => w.charAt(0).toUpperCase() + w.slice(1))
      // "pm" after a time ("at 2 pm") is the time of day; elsewhere a product manager.
      .replace(/\b(roi|sap|crm|erp|api|ai|hr|cfo|ceo|cto|coo|vp|it guy)\b|(?<![\d:.]\s?)\bpm\b/g, (w) => (w === 'it guy' ? 'IT guy' : w.toUpperCase()));
  }
  return out.replace(/^[,;:\s]+/, '');
}

function nameParts(name: string | null | undefined): string[] {
  return (name ?? '').toLowerCase().split(/\s+/).filter((w) => w.length > 1 && !/^(dr|mr|mrs|ms|mx|prof)\.?$/.test(w));
}

function sameName(label: string, name: string | null | undefined): boolean {
  const parts = nameParts(name);
  if (parts.length === 0) return false;
  const bare = label.toLowerCase().trim();
  return bare === parts.join(' ') || bare === parts[0] || bare.split(/\s+/)[0] === parts[0];
}

function sameCompany(a: string | null, b: string | null): boolean {
  if (!a || !b) return false;
  const word = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N} ]/gu, '').split(/\s+/)[0] ?? '';
  return word(a) !== '' && word(a) === word(b);
}

/** Decides each speaker's side from names, labels, companies, and how they speak: the seller introduces, pitches, promises. */
function assignRoles(turns: RawTurn[], texts: string[], options: ReadOptions): Map<string, SpeakerRole> {
  const labels = [...new Set(turns.map((t) => t.label).filter((l): l is string => l !== null))];
  const roles = new Map<string, SpeakerRole>();
  const companyOf = new Map<string, string | null>(turns.filter((t) => t.label).map((t) => [t.label!, t.company]));
  const leadFirst = nameParts(options.leadName)[0] ?? '';
  const leadLast = nameParts(options.leadName).at(-1) ?? '';
  for (const label of labels) {
    const company = companyOf.get(label) ?? null;
    if (sameName(label, options.leadName) || BUYER_LABELS.test(label) || sameCompany(company, options.leadCompany)) roles.set(label, 'buyer');
    else if (sameName(label, options.senderName) || REP_LABELS.test(label)) roles.set(label, 'rep');
    else if (company && options.leadCompany && labels.some((l) => sameCompany(companyOf.get(l) ?? null, options.leadCompany))) roles.set(label, 'rep');
  }
  if (labels.every((l) => roles.has(l))) return roles;

  // How much each unplaced speaker sounds like the seller.
  const score = new Map<string, number>(labels.map((l) => [l, 0]));
  const said = new Map<string, { questions: number; sentences: number }>();
  const greetsLead = leadFirst ? new RegExp(String.raw`\b(?:hi|hello|hey|morning|afternoon|thanks),?\s+(?:dr\.?\s+|mr\.?\s+|ms\.?\s+|mrs\.?\s+)?(?:${leadFirst}|${leadLast})\b`, 'i') : null;
  const introduces = /\b(?:this is|it['’]s|i['’]m|my name is)\s+[\p{L}]+\s+(?:from|with|at)\s|^(?:hi|hello|hey)\b[^.]{0,40}\b[\p{L}]+ from [\p{Lu}]/iu;
  const pitches = /\b(?:we help|our (?:customers|clients)|(?:customers|clients|brands|teams|clinics|firms|retailers) (?:we work with|like you)|we['’]d be|for your (?:traffic|size|team)|thanks for (?:having me|taking|picking up|fitting me|making (?:the )?time|the time|jumping on)|what i['’]d (?:suggest|propose)|here['’]s what i['’]d)\b/i;
  const promises = /\bi['’]ll (?:send|share|put together|set up|introduce|bring|run|get you)\b/i;
  turns.forEach((turn, i) => {
    if (!turn.label || roles.has(turn.label)) return;
    const text = texts[i]!;
    let s = score.get(turn.label)!;
    if (i < 4 && greetsLead?.test(text)) s += 3;
    if (introduces.test(text)) s += 3;
    if (pitches.test(text)) s += 1;
    if (promises.test(text)) s += 1;
    score.set(turn.label, s);
    const tally = said.get(turn.label) ?? { questions: 0, sentences: 0 };
    tally.questions += (text.match(/\?/g) ?? []).length;
    tally.sentences += Math.max(1, (text.match(/[.!?](?:\s|$)/g) ?? []).length);
    said.set(turn.label, tally);
  });
  const unplaced = labels.filter((l) => !roles.has(l));
  const rated = unplaced.map((l) => {
    const t = said.get(l) ?? { questions: 0, sentences: 1 };
    return { label: l, rating: score.get(l)! + (2 * t.questions) / t.sentences };
  });
  const repKnown = [...roles.values()].includes('rep');
  const best = rated.reduce<{ label: string; rating: number } | null>((a, b) => (a === null || b.rating > a.rating ? b : a), null);
  for (const { label, rating } of rated) {
    const isRep = (!repKnown && label === best?.label) || score.get(label)! >= 4;
    roles.set(label, isRep && rating > 0 ? 'rep' : repKnown || rated.length > 1 ? 'buyer' : 'rep');
  }
  return roles;
}

/** The transcript read: its format, its turns in order with their line and side, and the speakers. */
export function readTranscript(text: string, options: ReadOptions): Transcript {
  const format = detectFormat(text);
  const turns = readTurns(text, format);
  const texts = turns.map((t) => cleanSpoken(t.parts.join(' ')));
  const roles = assignRoles(turns, texts, options);
  const utterances: Utterance[] = [];
  turns.forEach((turn, i) => {
    if (!texts[i]) return;
    utterances.push({ line: turn.line, speaker: turn.label, company: turn.company, role: turn.label ? (roles.get(turn.label) ?? 'unknown') : 'unknown', text: texts[i]! });
  });
  const speakers: Speaker[] = [...roles.entries()].map(([label, role]) => ({
    label,
    name: /^(speaker \d+|rep|prospect)$/i.test(label) || REP_LABELS.test(label) || BUYER_LABELS.test(label) ? null : label,
    company: turns.find((t) => t.label === label)?.company ?? null,
    role,
  }));
  return { format, utterances, speakers };
}
