// The offline engine reads a call's transcript through the shared reader (src/agent/transcript/): which format it is
// in, who said what on which line, and which side they are on.
export { detectFormat, readTranscript } from '../../transcript/index.ts';
export type { People as ReadOptions, Speaker, SpeakerRole, Transcript, TranscriptFormat, Utterance } from '../../transcript/index.ts';
