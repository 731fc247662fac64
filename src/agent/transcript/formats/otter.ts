// Otter and Fireflies exports: the speaker and a time on one line ("Marcus Feld  0:42"), the text on the lines below.
import { isClockOnly, otterHead, type Lines } from '../lines.ts';
import type { Turn } from '../types.ts';
import { Turns } from './turns.ts';

export function readOtter(lines: Lines): Turn[] {
  const turns = new Turns();
  for (let i = 0; i < lines.length; i++) {
    const number = i + 1;
    const text = lines[i]!;
    if (!text || isClockOnly(text)) continue;
    const head = otterHead(text);
    if (head) turns.start(number, head.label, head.company);
    // What comes before the first head is the export's title and keywords, which nobody said.
    else if (turns.hasTurn) turns.add(number, text);
  }
  return turns.list;
}
