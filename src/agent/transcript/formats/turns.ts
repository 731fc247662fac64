// Gathering a format's lines into turns: a speaker's consecutive lines, and cues, make one turn.
import { fold } from '../labels.ts';
import type { Turn } from '../types.ts';

/**
 * The most characters one turn gathers. A turn is a person speaking for a while; past this, a turn's pieces are
 * dropped, which bounds what one utterance's text may be whatever a hostile transcript repeats.
 */
export const TURN_MAX = 32_768;

export class Turns {
  readonly list: Turn[] = [];
  private current: (Turn & { size: number }) | null = null;

  /** Starts a new turn, even when the same speaker had the last one (a new head in a labelled transcript). */
  start(line: number, label: string | null, company: string | null): void {
    this.current = { line, label, company, pieces: [], key: this.keyOf(label), size: 0 };
    this.list.push(this.current);
  }

  /** Adds text to the turn of `label`: the current one if that speaker has it, else a new one. */
  say(line: number, label: string | null, company: string | null, text: string): void {
    if (!this.current || this.keyOf(label) !== this.current.key) this.start(line, label, company);
    this.add(line, text);
  }

  /** Text that continues the current turn, whoever has it; before any turn, the text of nobody. */
  add(line: number, text: string): void {
    if (!text) return;
    if (!this.current) this.start(line, null, null);
    const turn = this.current!;
    if (turn.pieces.length === 0) turn.line = line;
    if (turn.size + text.length > TURN_MAX) return;
    turn.pieces.push(text);
    turn.size += text.length + 1;
  }

  /** Folding is the costly part of a short turn: the current speaker's label, spelled the same, is not folded again. */
  private keyOf(label: string | null): string | null {
    if (label === null) return null;
    return label === this.current?.label ? this.current.key : fold(label);
  }

  get speaker(): string | null {
    return this.current?.label ?? null;
  }

  get hasTurn(): boolean {
    return this.current !== null;
  }

  /** Ends the current turn: what follows belongs to a new one. */
  end(): void {
    this.current = null;
  }
}
