// Our words, not the transcript's: a draft never carries 8 or more words in a row as they were said, even with the
// pronouns swapped (DESIGN §12). Words are compared folded (pronouns alike, "is"/"are" alike, contractions split),
// and a run that is too long is broken by a small edit: a synonym, a dropped filler word, "the" for "our"; what the
// buyer said may also be told in the past tense, as reported speech is.

const PRONOUNS = new Set(['i', 'me', 'my', 'mine', 'myself', 'you', 'your', 'yours', 'yourself', 'yourselves', 'we', 'us', 'our', 'ours', 'ourselves', 'they', 'them', 'their', 'theirs', 'themselves']);
const CONTRACTIONS: Record<string, string[]> = {
  "i'm": ['P', 'be'], "you're": ['P', 'be'], "we're": ['P', 'be'], "they're": ['P', 'be'], "i've": ['P', 'have'], "you've": ['P', 'have'],
  "we've": ['P', 'have'], "they've": ['P', 'have'], "i'll": ['P', 'will'], "you'll": ['P', 'will'], "we'll": ['P', 'will'], "they'll": ['P', 'will'],
  "i'd": ['P', 'would'], "you'd": ['P', 'would'], "we'd": ['P', 'would'], "they'd": ['P', 'would'], "it's": ['it', 'be'], "that's": ['that', 'be'],
  "there's": ['there', 'be'], "let's": ['let', 'P'], "can't": ['can', 'not'], cannot: ['can', 'not'], "won't": ['will', 'not'], "isn't": ['be', 'not'],
  "aren't": ['be', 'not'], "don't": ['do', 'not'], "doesn't": ['do', 'not'], "didn't": ['did', 'not'], "haven't": ['have', 'not'], "wouldn't": ['would', 'not'],
};
const VERBS: Record<string, string> = { am: 'be', are: 'be', is: 'be', was: 'was', were: 'was', has: 'have', have: 'have', does: 'do', do: 'do' };
const WORD = /[\p{L}\p{N}]+(?:['.,\-/][\p{L}\p{N}]+)*/gu;
const RUN = 8;
/** Words no phrase ends on: articles, prepositions, conjunctions, possessives, auxiliaries, "last", "next". */
const DANGLING_WORD =
  /^(?:the|a|an|and|or|but|so|for|of|to|in|on|at|by|with|from|into|over|under|per|as|than|that|this|these|those|which|who|your|our|my|their|its|his|her|is|are|was|were|be|been|has|have|had|do|does|did|will|would|can|could|should|about|around|last|next|every|each|any|some|no|not|very|more|most|less|before|after|until|since|if|when|while|because|plus|including|through|just|also|like)$/i;

function fold(text: string): string[] {
  const out: string[] = [];
  for (const match of text.toLowerCase().replace(/’/g, "'").matchAll(WORD)) {
    const w = match[0];
    for (const t of CONTRACTIONS[w] ?? [PRONOUNS.has(w) ? 'P' : (VERBS[w] ?? w)]) if (out.at(-1) !== t || t === 'P') out.push(t);
  }
  return out;
}

/** Every run of 8 words said on the call, folded: what a draft must not repeat. */
export class SaidIndex {
  private readonly grams = new Set<string>();
  constructor(sentences: readonly string[]) {
    for (const sentence of sentences) {
      const t = fold(sentence);
      for (let i = 0; i + RUN <= t.length; i++) this.grams.add(t.slice(i, i + RUN).join(' '));
    }
  }

  /** The first run of 8 of `text`'s words that was said, as its word positions in `text`, or null. */
  copiedRun(text: string): { from: number; to: number } | null {
    const words = [...text.replace(/’/g, "'").matchAll(WORD)];
    const tokens: Array<{ t: string; w: number }> = [];
    words.forEach((m, wi) => {
      const w = m[0].toLowerCase();
      for (const t of CONTRACTIONS[w] ?? [PRONOUNS.has(w) ? 'P' : (VERBS[w] ?? w)]) tokens.push({ t, w: wi });
    });
    for (let i = 0; i + RUN <= tokens.length; i++) {
      if (this.grams.has(tokens.slice(i, i + RUN).map((x) => x.t).join(' '))) return { from: tokens[i]!.w, to: tokens[i + RUN - 1]!.w };
    }
    return null;
  }
}

const SWAPS: Record<string, string> = {
  about: 'around', around: 'about', roughly: 'about', every: 'each', each: 'every', and: 'plus', our: 'the', your: 'the', my: 'the',
  their: 'the', big: 'large', large: 'big', whole: 'entire', start: 'begin', across: 'over', send: 'share', review: 'go through',
  with: 'including', based: 'built', show: 'walk you through', need: 'want', want: 'need', wants: 'needs', needs: 'wants', spends: 'puts', takes: 'eats up', handles: 'deals with', get: 'have', problem: 'issue', issue: 'problem', losing: 'losing out on',
};
const PAST: Record<string, string> = {
  is: 'was', are: 'were', has: 'had', have: 'had', wants: 'wanted', needs: 'needed', takes: 'took', spends: 'spent', handles: 'handled',
  does: 'did', gets: 'got', goes: 'went', runs: 'ran', keeps: 'kept', loses: 'lost', costs: 'cost', make: 'made', makes: 'made', returns: 'returned',
  "you're": 'you were', 'you’re': 'you were', "it's": 'it was', 'it’s': 'it was', "that's": 'that was', 'that’s': 'that was',
};
const DROPPABLE = new Set(['really', 'actually', 'just', 'still', 'also', 'very', 'quite', 'even', 'alone', 'pretty', 'basically', 'honestly', 'literally', 'totally', 'like', 'currently', 'probably', 'full', 'good', 'short', 'all', 'so']);

/**
 * `text` with every run of 8 words said on the call broken by the smallest edit found, nearest the run's middle;
 * words in `keep` (names, figures, dates) are never the ones edited. Bounded: at most a few edits per run.
 */
export function inOurWords(text: string, said: SaidIndex, keep: (word: string) => boolean = () => false, reported = false): string {
  let out = text.replace(/’/g, "'");
  let backshifted = !reported;
  for (let attempt = 0; attempt < 12; attempt++) {
    const run = said.copiedRun(out);
    if (!run) return out;
    const matches = [...out.matchAll(WORD)];
    const middle = Math.floor((run.from + run.to) / 2);
    const order = [...Array(run.to - run.from + 1).keys()].map((k) => run.from + k).sort((a, b) => Math.abs(a - middle) - Math.abs(b - middle));
    let edited = false;
    for (const pass of ['drop', 'swap'] as const) {
      for (const at of order) {
        const m = matches[at]!;
        const word = m[0];
        const lower = word.toLowerCase();
        if (keep(word) || (pass === 'swap' && /^(our|your|my|their)$/.test(lower) && /^\s*own\b/i.test(out.slice(m.index + word.length)))) continue;
        if (pass === 'drop' && DROPPABLE.has(lower) && !(lower === 'the' && at === run.from)) {
          out = `${out.slice(0, m.index)}${out.slice(m.index + word.length).replace(/^\s+/, '')}`;
          edited = true;
        } else if (pass === 'swap' && SWAPS[lower]) {
          const swap = /^[A-Z]/.test(word) ? SWAPS[lower]!.charAt(0).toUpperCase() + SWAPS[lower]!.slice(1) : SWAPS[lower]!;
          out = `${out.slice(0, m.index)}${swap}${out.slice(m.index + word.length)}`;
          edited = true;
        }
        if (edited) break;
      }
      if (edited) break;
    }
    if (!edited && !backshifted) {
      // Reported speech: "your auditor wants" → "your auditor wanted". Bounded: one sentence of our own, once.
      backshifted = true;
      let shifted = false;
      for (const m of [...out.matchAll(WORD)].slice(run.from, run.to + 1)) {
        const past = PAST[m[0].toLowerCase()];
        if (!past) continue;
        out = `${out.slice(0, m.index)}${past}${out.slice(m.index + m[0].length)}`;
        shifted = true;
        break;
      }
      if (shifted) continue;
    }
    if (!edited) {
      // Nothing small breaks it: the text ends inside the run, on a word that can end a phrase ("140 hours", never
      // "140 hours last" or "before tax season in"), else before the run at a clause's end.
      let end = run.from + 6;
      while (end > run.from + 2 && DANGLING_WORD.test(matches[end]![0])) end--;
      if (DANGLING_WORD.test(matches[end]![0])) {
        const before = out.slice(0, matches[run.from]!.index).replace(/[,;:\s]+$/, '').replace(/\s(?:and|but|so|or|plus)$/i, '');
        if (before.split(/\s+/).length >= 3) return before;
      }
      const m = matches[end]!;
      return out.slice(0, m.index + m[0].length).replace(/[,;:\s]+$/, '');
    }
  }
  return out;
}
