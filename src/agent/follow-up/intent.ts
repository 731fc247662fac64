// What a sequence step's instruction asks of its follow-up (DESIGN §13: "a short bump with one new point from the
// call", "a last note: ask whether to close the file", "share a relevant resource"), read from the common words
// for each. The instruction is an admin's few words (at most 500 characters); it is read no further.
export type Intent = 'bump' | 'close' | 'resource' | 'timing';

const INSTRUCTION_READ_MAX = 600;
const CLOSE = /\b(?:close (?:the |out the )?(?:file|loop)|closing the (?:file|loop)|last (?:note|e-?mail|touch|try|follow-?up|one)|final|break-?up|one last|whether to (?:close|stop)|(?:stop|pause) (?:here|for now)|wrap (?:it )?up)\b/i;
const RESOURCE = /\b(?:resource|case stud(?:y|ies)|article|guide|docs?|documentation|one-?pager|white ?paper|link|material|example|reference|share|send (?:something|a|the))\b/i;
const TIMING = /\b(?:timing|deadline|date|urgency|go-?live|launch)\b/i;

/**
 * The step's intent: what the instruction names, else by its place in the sequence: the last touch of three or more
 * closes the loop, any other bumps the thread with a new point.
 */
export function readIntent(instruction: string, touchNumber: number, touchCount: number): Intent {
  const text = instruction.slice(0, INSTRUCTION_READ_MAX);
  if (CLOSE.test(text)) return 'close';
  if (RESOURCE.test(text)) return 'resource';
  if (TIMING.test(text)) return 'timing';
  return touchNumber >= 3 && touchNumber >= touchCount ? 'close' : 'bump';
}
