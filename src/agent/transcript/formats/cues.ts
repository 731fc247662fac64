// WebVTT (Zoom, Teams) and SRT: numbered or named cues, a timing line, and the cue's text, in which the speaker is
// a voice tag (`<v Name>`, Teams) or a "Name:" head (Zoom, most SRT exports).
import { isSpeakerLabel } from '../labels.ts';
import { HEAD_MAX, labelOf, speakerHead, timingOf, type Lines } from '../lines.ts';
import type { Turn } from '../types.ts';
import { Turns } from './turns.ts';

export function readCues(lines: Lines, webvtt: boolean): Turn[] {
  const turns = new Turns();
  let inCue = false;
  let skipping = false;
  let first = true;
  for (let i = 0; i < lines.length; i++) {
    const number = i + 1;
    const text = lines[i]!;
    if (!text) {
      inCue = false;
      skipping = false;
      continue;
    }
    if (skipping) continue;
    if (timingOf(text)) {
      // Cues nobody is named in (plain subtitles) are each their own utterance, not one run of the whole file.
      if (turns.hasTurn && turns.speaker === null) turns.end();
      inCue = true;
      first = false;
      continue;
    }
    if (!inCue) {
      // The WEBVTT header, comments and style blocks run to the next blank line.
      const block = webvtt && (first ? /^WEBVTT/.test(text) : /^(?:NOTE|STYLE|REGION)(?:\s|$)/.test(text));
      first = false;
      if (block) {
        skipping = true;
        continue;
      }
      // A cue number (SRT, Zoom) or a Teams cue id ("6b1a…/12-0") stands on the line before the timing.
      if (/^\d+$/.test(text) || (lines[i + 1] && timingOf(lines[i + 1]!))) continue;
    }
    readCueText(turns, number, text);
  }
  return turns.list;
}

/** One line of a cue's text: voice-tagged pieces, a "Name:" head, or more of what the last speaker said. */
function readCueText(turns: Turns, line: number, text: string): void {
  if (text.includes('<v')) {
    readVoices(turns, line, text);
    return;
  }
  // "<i>Ada: text</i>": a style tag may come before the speaker's name.
  const start = leadingTagsEnd(text);
  const head = speakerHead(text.slice(start));
  if (head && isSpeakerLabel(head.label)) {
    turns.say(line, head.label, head.company, text.slice(start + head.textStart).trim());
  }
  // A cue without a speaker is the last one's still speaking: exports name the speaker when it changes.
  else turns.add(line, text);
}

/**
 * "<v Marcus Feld>We have.</v> <v.loud Aisha>And…</v>": each voice's text. The position of the next `>` is kept, so
 * a line full of unclosed "<v" is read once, not once for each of them.
 */
function readVoices(turns: Turns, line: number, text: string): void {
  let at = 0;
  let gt = -1;
  let speaker = turns.speaker;
  let company: string | null = null;
  let from = 0;
  while (at < text.length) {
    const open = text.indexOf('<v', at);
    if (open < 0) break;
    if (gt < open) gt = text.indexOf('>', open);
    if (gt < 0) break;
    const tag = text.slice(open + 2, gt);
    if (gt - open > HEAD_MAX || !(tag.startsWith(' ') || tag.startsWith('.'))) {
      at = open + 2;
      continue;
    }
    say(turns, line, speaker, company, text.slice(from, open));
    const name = labelOf(tag.slice(tag.indexOf(' ') + 1));
    speaker = name?.label ?? null;
    company = name?.company ?? null;
    // Start the new voice's turn even before its text, so it is on this line.
    if (speaker !== turns.speaker) turns.start(line, speaker, company);
    from = gt + 1;
    at = gt + 1;
  }
  say(turns, line, speaker, company, text.slice(from));
}

/** Where the style tags a cue's text starts with end ("<i><b>Ada:…" → 6); each tag is at most HEAD_MAX long. */
function leadingTagsEnd(text: string): number {
  let at = 0;
  while (text[at] === '<' && at < HEAD_MAX) {
    const close = text.indexOf('>', at);
    if (close < 0 || close - at > HEAD_MAX) break;
    at = close + 1;
  }
  return at;
}

function say(turns: Turns, line: number, speaker: string | null, company: string | null, text: string): void {
  const piece = text.replaceAll('</v>', ' ').trim();
  if (piece) turns.say(line, speaker, company, piece);
}
