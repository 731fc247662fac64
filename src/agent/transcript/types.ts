// The shapes a transcript is read into (index.ts reads it). The writer codes against these names: add, never rename.

/** How a transcript is laid out; DESIGN §12 lists the layouts reps paste. */
export type TranscriptFormat =
  | 'webvtt' | 'srt' | 'otter' | 'timestamped' | 'rep-prospect' | 'speaker-n' | 'labelled' | 'meet' | 'plain';

import { TRANSCRIPT_FORMATS } from '../../schemas/calls.ts';

TRANSCRIPT_FORMATS satisfies readonly TranscriptFormat[];
export { TRANSCRIPT_FORMATS };
/** Fails to compile when a format is missing from TRANSCRIPT_FORMATS. */
export const ALL_FORMATS_LISTED: [Exclude<TranscriptFormat, (typeof TRANSCRIPT_FORMATS)[number]>] extends [never]
  ? true : never = true;

export type SpeakerRole = 'rep' | 'buyer' | 'unknown';

export interface Utterance {
  /** 1-based line of the original transcript where this utterance's text starts. */
  line: number;
  /** The speaker's label as written ("Marcus Feld", "Speaker 2", "PROSPECT"), null when the transcript names none. */
  speaker: string | null;
  /** A company given with the name ("[00:03:12] Name (Company):"), else null. */
  company: string | null;
  role: SpeakerRole;
  /**
   * What was said, cleaned: no timestamps, cue numbers, tags, [inaudible]/[crosstalk] markers, fillers, stutters;
   * sentence-cased and punctuated where ASR gave none (best effort).
   */
  text: string;
}

export interface Speaker {
  label: string;
  /** The person's name; null for a label that names nobody ("Speaker 2", "REP"). */
  name: string | null;
  company: string | null;
  role: SpeakerRole;
}

export interface Transcript {
  format: TranscriptFormat;
  utterances: Utterance[];
  speakers: Speaker[];
}

/** Who the call was with and who sold: the run's lead and sender. */
export interface People {
  leadName: string;
  senderName: string | null;
  leadCompany: string | null;
}

/** A speaker's turn as a format reads it, before cleaning: its text is the raw pieces, in order. */
export interface Turn {
  line: number;
  label: string | null;
  /** The label folded (labels.ts): one speaker's turns have the same key however the label was spelled. */
  key: string | null;
  company: string | null;
  pieces: string[];
}
