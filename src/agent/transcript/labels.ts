// What a speaker's label says by its words alone: a side ("REP", "Customer"), a number ("Speaker 2"), a line of notes
// ("Summary:") or a person's name. Labels are at most 60 characters (lines.ts), so these patterns run in bounded time.

const REP_LABELS = new Set([
  'rep', 'sales', 'sales rep', 'salesrep', 'sales person', 'salesperson', 'seller', 'account executive', 'ae', 'sdr',
  'bdr', 'me', 'us', 'agent', 'host', 'interviewer', 'vendor', 'our side', 'sales team', 'sales engineer', 'se', 'csm',
]);
const BUYER_LABELS = new Set([
  'prospect', 'customer', 'client', 'lead', 'buyer', 'them', 'guest', 'caller', 'their side', 'customer team',
]);
/** "Speaker 2", "speaker a", "Participant 3", "Unknown Speaker": a label that numbers a voice and names nobody. */
const NUMBERED = new RegExp(String.raw`^(?:(?:speaker|spk|participant|person|voice|caller|guest|attendee)`
  + String.raw`(?:\s*[#-]?\s*\d{1,4}|\s*[#-]?\s+[a-z])|unknown speaker(?:\s*\d{1,4})?)$`, 'i');
/** Labels that head a line of notes, not a person speaking. */
const NOTE_LABELS = new Set([
  'note', 'notes', 'summary', 'next step', 'next steps', 'action item', 'action items', 'agenda', 'follow up',
  'follow-up', 'followup', 'follow ups', 'pain points', 'pain point', 'objections', 'todo', 'to do', 'decision',
  'decisions', 'keywords', 'key points', 'highlights', 'outline', 'takeaways', 'budget', 'timeline', 'pricing',
  'price', 'competitors', 'competition', 'decision maker', 'pain', 'goals', 'challenges', 'requirements', 'concerns',
  'questions', 'risks', 'context', 'background', 'status', 'outcome', 'result', 'owner', 'stakeholders', 'needs',
  'use case', 'current tools', 'current stack', 'tools', 'stack', 'timing', 'authority', 'need', 'champion',
]);
/** Labels of a header's facts about the meeting, which nobody said. */
const META_LABELS = new Set([
  'attendees', 'participants', 'date', 'time', 'title', 'subject', 'call', 'meeting', 'duration', 'location',
  'transcript', 'recording', 'recorded', 'started', 'ended', 'organizer', 'organiser', 'invitees', 'when',
  'where', 'platform', 'language', 'created', 'speakers', 'meeting id', 'meeting title', 'call date', 'company',
]);
/** Words that may start lower-case inside a person's name. */
const PARTICLES = new Set([
  'van', 'von', 'de', 'der', 'den', 'da', 'di', 'du', 'la', 'le', 'del', 'bin', 'al', 'ten', 'y',
]);

export type LabelKind = 'rep' | 'buyer' | 'numbered' | 'note' | 'meta' | 'name';

/** Lower case, accents off, runs of spaces as one: how two spellings of a name are compared. */
export function fold(text: string): string {
  // Most labels are plain ASCII with single spaces, which need no normalising.
  if (!/[^\x21-\x7e ]| {2}/.test(text)) return text.toLowerCase().trim();
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** "Rep 2" → "rep": a side's label may be numbered when the side has several people. */
function unnumbered(folded: string): string {
  return folded.replace(/\s*[#-]?\s*\d{1,3}$/, '').replace(/[()[\].]/g, '').trim();
}

export function labelKind(label: string): LabelKind {
  const folded = fold(label);
  if (NUMBERED.test(folded)) return 'numbered';
  const side = unnumbered(folded);
  if (REP_LABELS.has(side)) return 'rep';
  if (BUYER_LABELS.has(side)) return 'buyer';
  if (NOTE_LABELS.has(folded)) return 'note';
  if (META_LABELS.has(folded)) return 'meta';
  return 'name';
}

/** A label written as a name: each word capitalised ("Marcus Feld", "Ines de la Cruz", "O'Brien"), or all capitals. */
export function looksLikeName(label: string): boolean {
  const words = label.split(/[\s,]+/).filter(Boolean);
  if (words.length === 0 || words.length > 5) return false;
  return words.every((word) => PARTICLES.has(word) || /^[\p{Lu}\p{Lt}\p{N}]/u.test(word));
}

/** The name a label writes: Teams's "Becker, Tom" is "Tom Becker". */
export function personName(label: string): string {
  const parts = label.split(',');
  if (parts.length !== 2) return label;
  const [last, first] = [parts[0]!.trim(), parts[1]!.trim()];
  return first && last ? `${first} ${last}` : label;
}

/** Whether a label is a speaker's: a side, a number or a name, and not a line of notes. */
export function isSpeakerLabel(label: string): boolean {
  const kind = labelKind(label);
  return kind === 'rep' || kind === 'buyer' || kind === 'numbered' || (kind === 'name' && looksLikeName(label));
}
