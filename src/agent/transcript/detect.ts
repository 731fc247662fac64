// Which layout a transcript has, read from its start only: detection is O(1) in the transcript's size, so it may run
// on the request path when a call is created (its `format` is stored with it) as well as in the CPU pool.
import { labelKind, isSpeakerLabel } from './labels.ts';
import { isClockOnly, otterHead, speakerHead, splitLines, timingOf } from './lines.ts';
import type { TranscriptFormat } from './types.ts';

/** Detection reads at most this much of a transcript's start: enough for a header and a dozen turns. */
export const DETECT_CHARS = 8192;
export const DETECT_LINES = 64;

export function detectFormat(text: string): TranscriptFormat {
  const lines = splitLines(text.slice(0, DETECT_CHARS)).slice(0, DETECT_LINES).filter((line) => line !== '');
  if (lines.length === 0) return 'plain';
  if (/^WEBVTT(?:$|[\s-])/.test(lines[0]!)) return 'webvtt';

  let dotTimings = 0;
  let commaTimings = 0;
  let otterHeads = 0;
  let clockLines = 0;
  let attendees = false;
  const heads: Array<{ label: string; stamped: boolean }> = [];
  for (const [i, line] of lines.entries()) {
    const timing = timingOf(line);
    if (timing === 'dot') dotTimings++;
    else if (timing === 'comma') commaTimings++;
    if (timing) continue;
    if (isClockOnly(line)) {
      clockLines++;
      continue;
    }
    // An Otter head is followed by its text, not by another head or a blank.
    const next = lines[i + 1];
    if (otterHead(line) && next !== undefined && !otterHead(next)) otterHeads++;
    const head = speakerHead(line);
    if (!head) continue;
    const kind = labelKind(head.label);
    if (kind === 'meta' && /^(attendees|participants|invitees)$/i.test(head.label)) attendees = true;
    if (kind !== 'note' && kind !== 'meta') heads.push({ label: head.label, stamped: head.stamped });
  }
  if (dotTimings + commaTimings > 0) return commaTimings > dotTimings ? 'srt' : 'webvtt';

  // A name that heads two lines is a speaker's even if not written as a name ("ada: …" in a lower-case export).
  const count = new Map<string, number>();
  for (const head of heads) count.set(head.label, (count.get(head.label) ?? 0) + 1);
  const speaking = heads.filter((head) => isSpeakerLabel(head.label) || count.get(head.label)! >= 2);
  if (otterHeads >= 2 && otterHeads >= speaking.length) return 'otter';
  // A transcript of one line that a speaker heads ("Ada: Reporting takes four days.") is that speaker's.
  if (speaking.length === 1 && lines.length === 1) return 'labelled';
  if (speaking.length < 2) return otterHeads > 0 ? 'otter' : 'plain';
  if (speaking.filter((head) => head.stamped).length * 2 >= speaking.length) return 'timestamped';
  if (clockLines > 0 || attendees) return 'meet';
  const kinds = speaking.map((head) => labelKind(head.label));
  if (kinds.filter((kind) => kind === 'numbered').length * 2 >= kinds.length) return 'speaker-n';
  if (kinds.filter((kind) => kind === 'rep' || kind === 'buyer').length * 2 >= kinds.length) return 'rep-prospect';
  return 'labelled';
}
