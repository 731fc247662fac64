// Transcripts whose every turn starts with its speaker: "Name: text", "REP:", "Speaker 1:", "[00:03:12] Name
// (Company): text", and Google Meet's export (a header, "00:05:00" marks on their own lines, then "Name: text").
import { isSpeakerLabel, labelKind } from '../labels.ts';
import { isClockOnly, speakerHead, type Lines } from '../lines.ts';
import type { Turn } from '../types.ts';
import { Turns } from './turns.ts';

/** `header`: lines before the first speaker are a header to skip (Meet), not notes to keep. */
export function readLabelled(lines: Lines, header: boolean): Turn[] {
  const heads = lines.map((text) => (text ? speakerHead(text) : null));
  // A label that heads two lines is a speaker's even when not written as a name ("ada: …" from a lower-case export).
  const seen = new Map<string, number>();
  for (const head of heads) if (head) seen.set(head.label, (seen.get(head.label) ?? 0) + 1);

  // What each distinct label is, worked out once: a transcript repeats a few labels many times.
  const kinds = new Map<string, { kind: ReturnType<typeof labelKind>; speaking: boolean }>();
  const kindOf = (label: string) => {
    let known = kinds.get(label);
    if (!known) {
      known = { kind: labelKind(label), speaking: isSpeakerLabel(label) || seen.get(label)! >= 2 };
      kinds.set(label, known);
    }
    return known;
  };
  const turns = new Turns();
  let dropping = false;
  for (let i = 0; i < lines.length; i++) {
    const number = i + 1;
    const text = lines[i]!;
    if (!text) {
      dropping = false;
      continue;
    }
    if (isClockOnly(text)) continue;
    const head = heads[i];
    const { kind, speaking } = head ? kindOf(head.label) : { kind: null, speaking: false };
    if (head && kind === 'meta') {
      // "Attendees: …", "Date: …": facts about the meeting, which nobody said, and the lines that list them.
      turns.end();
      dropping = true;
    } else if (head && kind === 'note') {
      turns.start(number, null, null);
      turns.add(number, text.slice(head.textStart).trim());
      dropping = false;
    } else if (head && speaking) {
      turns.start(number, head.label, head.company);
      turns.add(number, text.slice(head.textStart).trim());
      dropping = false;
    } else if (!dropping && (turns.hasTurn || !header)) {
      turns.add(number, text);
    }
  }
  return turns.list;
}

/** Text with no speakers: each paragraph (lines up to a blank one) is one utterance of nobody in particular. */
export function readPlain(lines: Lines): Turn[] {
  const turns = new Turns();
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (!text) turns.end();
    else if (!isClockOnly(text)) turns.add(i + 1, text);
  }
  return turns.list;
}
