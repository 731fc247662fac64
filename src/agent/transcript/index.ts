// Reading a call's transcript as reps have them (DESIGN §12): its format, who said what, and which side they are on.
// A transcript is a stranger's text of up to 200,000 characters: every pass here is linear in its size, lines are
// cut to LINE_MAX and turns to TURN_MAX, and readTranscript runs in the CPU pool, as the engines do.
import { cleanText } from './clean.ts';
import { detectFormat } from './detect.ts';
import { readCues } from './formats/cues.ts';
import { readLabelled, readPlain } from './formats/labelled.ts';
import { readOtter } from './formats/otter.ts';
import { fold, labelKind, personName } from './labels.ts';
import { splitLines } from './lines.ts';
import { assignRoles, leadFirstName, sellerCues, type SpeakerFacts } from './roles.ts';
import type { People, Speaker, Transcript, TranscriptFormat, Turn, Utterance } from './types.ts';

export { detectFormat } from './detect.ts';
export { TRANSCRIPT_FORMATS } from './types.ts';
export type { People, Speaker, SpeakerRole, Transcript, TranscriptFormat, Utterance } from './types.ts';

/** How the UI and the API's description name each format. */
export const FORMAT_LABELS: Record<TranscriptFormat, string> = {
  webvtt: 'WebVTT (Zoom/Teams)',
  srt: 'SRT subtitles',
  otter: 'Otter/Fireflies export',
  timestamped: 'Timestamped ([00:03:12] Name:)',
  'rep-prospect': 'REP/PROSPECT labels',
  'speaker-n': 'Speaker 1/Speaker 2',
  labelled: 'Name: text',
  meet: 'Google Meet export',
  plain: 'Plain text',
};

/** The call's first turns, where a seller greets the lead by name. */
const EARLY_TURNS = 4;

function countOf(text: string, char: string): number {
  let count = 0;
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) count += 1;
  return count;
}

/** How much of a speaker's first turns is searched for "this is Jonas from …". */
const OPENING_TURNS = 3;
const OPENING_CHARS = 400;

export function readTranscript(text: string, people: People): Transcript {
  const format = detectFormat(text);
  const turns = turnsOf(format, splitLines(text)).filter((turn) => turn.pieces.length > 0);

  // Speakers by their folded label, in the order they first speak; the first spelling and company given are kept.
  const index = new Map<string, number>();
  const facts: SpeakerFacts[] = [];
  const openings: string[][] = [];
  const leadFirst = leadFirstName(people);
  let labelled = 0;
  for (const turn of turns) {
    if (turn.label === null) continue;
    const key = turn.key!;
    let at = index.get(key);
    if (at === undefined) {
      at = facts.length;
      index.set(key, at);
      const named = labelKind(turn.label) === 'name';
      const name = named ? personName(turn.label) : null;
      facts.push({ label: turn.label, name, company: turn.company, opening: '', seller: 0, questions: 0, sentences: 0 });
      openings.push([]);
    }
    if (facts[at]!.company === null) facts[at]!.company = turn.company;
    const said = turn.pieces.join(' ').slice(0, OPENING_CHARS);
    if (openings[at]!.length < OPENING_TURNS) openings[at]!.push(said);
    const speaker = facts[at]!;
    speaker.seller += sellerCues(said, labelled < EARLY_TURNS, leadFirst);
    speaker.questions += countOf(said, '?');
    speaker.sentences += Math.max(1, countOf(said, '.') + countOf(said, '?') + countOf(said, '!'));
    labelled += 1;
  }
  facts.forEach((speaker, i) => (speaker.opening = openings[i]!.join(' ')));
  const roles = assignRoles(facts, people);
  const speakers: Speaker[] = facts.map((speaker, i) => ({
    label: speaker.label,
    name: speaker.name,
    company: speaker.company,
    role: roles[i]!,
  }));

  const names = knownNames(speakers, people);
  const utterances: Utterance[] = [];
  for (const turn of turns) {
    const cleaned = cleanText(turn.pieces.join(' '), names);
    if (!cleaned) continue;
    const speaker = turn.label === null ? undefined : speakers[index.get(turn.key!)!];
    utterances.push({
      line: turn.line,
      speaker: speaker?.label ?? null,
      company: speaker?.company ?? null,
      role: speaker?.role ?? 'unknown',
      text: cleaned,
    });
  }
  return { format, utterances, speakers };
}

function turnsOf(format: TranscriptFormat, lines: ReturnType<typeof splitLines>): Turn[] {
  switch (format) {
    case 'webvtt':
      return readCues(lines, true);
    case 'srt':
      return readCues(lines, false);
    case 'otter':
      return readOtter(lines);
    case 'meet':
      return readLabelled(lines, true);
    case 'plain':
      return readPlain(lines);
    default:
      return readLabelled(lines, false);
  }
}

/** The words of people's and companies' names, folded: what a lower-case transcript writes with a capital. */
function knownNames(speakers: Speaker[], people: People): Set<string> {
  const names = new Set<string>();
  const add = (name: string | null) => {
    if (!name) return;
    for (const word of fold(name).split(/[\s,]+/)) if (word.length > 1) names.add(word);
  };
  add(people.leadName);
  add(people.senderName);
  add(people.leadCompany);
  for (const speaker of speakers.slice(0, 1000)) {
    add(speaker.name);
    add(speaker.company);
  }
  return names;
}
