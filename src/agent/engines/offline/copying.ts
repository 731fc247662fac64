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
/** Words as the draft checks count them (src/agent/draft-checks.ts): "38,000" is two, so that both see the same runs. */
const WORD = /[\p{L}\p{N}]+(?:['.&\-][\p{L}\p{N}]+)*/gu;
const RUN = 8;
/** Words no phrase ends on: articles, prepositions, conjunctions, possessives, auxiliaries, "last", "next", and verbs
 * and question words that need what follows ("how you get"). */
const DANGLING_WORD =
  /^(?:the|a|an|and|or|but|so|for|of|to|in|on|at|by|with|from|into|over|under|per|as|than|that|this|these|those|which|who|your|our|my|their|its|his|her|is|are|was|were|be|been|has|have|had|do|does|did|will|would|can|could|should|about|around|last|next|every|each|any|some|no|not|very|more|most|less|before|after|until|since|if|when|while|because|plus|including|through|just|also|like|get|go|come|move|turn|make|take|put|see|know|show|find|understand|how|what|where|why)$/i;

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

/** Words said another way that mean the same; the few that do not everywhere ("and", "with") are checked where used. */
const SWAPS: Record<string, string> = {
  about: 'around', around: 'about', roughly: 'about', every: 'each', each: 'every', and: 'plus', our: 'the', your: 'the', my: 'the',
  their: 'the', big: 'large', large: 'big', whole: 'entire', start: 'begin', across: 'in', send: 'share', review: 'go through',
  with: 'including', based: 'built', built: 'based', show: 'walk you through', need: 'want', want: 'need', wants: 'needs', needs: 'wants', spends: 'puts',
  takes: 'costs', handles: 'deals with', both: 'the two', quick: 'brief', compare: 'set side by side', problem: 'issue', issue: 'problem', losing: 'losing out on',
};
/**
 * "plus" joins things, not actions or clauses: "the docs plus a key", never "run an audit plus send the results"
 * nor "close takes 6 days plus the controller is burned out".
 */
const CLAUSE_FOLLOWS = /^\s+(?:(?:I|you|we|they|he|she|it)\b|(?:\S+\s+){0,4}?(?:is|are|was|were|has|have|had|will|can|does|do|did)\b)/i;
/** An action after "and" follows ", then": "run an audit, then send you the results". */
const ACTION_FOLLOWS =
  /^\s+(?:send|share|run|get|set|make|take|give|see|show|let|put|bring|call|book|write|prepare|follow|walk|go|come|check|compare|introduce|connect|loop|add|pull|use|start|keep|look|talk|meet|try|redact|file)\b/i;
/** "with the ROI math" may be "including the ROI math", "with Ben" "including Ben"; "with us", "with Harlow Bank" not. */
const THING_OR_PERSON_FOLLOWS = /^\s+(?:(?:the|a|an|our|your|their|some|\d)\b|\p{Lu}\p{Ll}+\b(?!\s+\p{Lu}))/u;
/** Nouns a possessive measures by ("teams your size"): "the" would lose the comparison, so the word stays. */
const MEASURE = /^\s+(?:size|age|scale|stage|kind|sort|type|level)\b/i;
/** A phrase ends after "each" or "every" used alone ("fifteen minutes each"): a swap there leaves "every" dangling. */
const ENDS_HERE = /^\s*(?:[,;:.!?)]|$)/;
const NUMBER_WORDS: Record<string, string> = {
  two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9', ten: '10', eleven: '11', twelve: '12',
  thirteen: '13', fourteen: '14', fifteen: '15', sixteen: '16', seventeen: '17', eighteen: '18', nineteen: '19', twenty: '20',
  thirty: '30', forty: '40', fifty: '50', sixty: '60', seventy: '70', eighty: '80', ninety: '90', hundred: '100',
};
const MONTH_NAMES = 'January|February|March|April|May|June|July|August|September|October|November|December';
/**
 * The same figure written another way: a run said word for word is broken without losing what it measures.
 * "fifteen minutes" → "15 minutes", "85 thousand dollars" → "$85,000", "May 6" → "May 6th", "18 percent" → "18%".
 */
const FIGURE_FORMS: Array<[RegExp, (...m: string[]) => string]> = [
  [new RegExp(String.raw`\b(${Object.keys(NUMBER_WORDS).join('|')})(?=\s(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b)`, 'i'),
    (_m, n) => NUMBER_WORDS[n!.toLowerCase()]!],
  [/(?<![$€£\d.,])\b(\d{1,3}) thousand (dollars|euros|pounds)\b/i,
    (_m, n, c) => `${({ dollars: '$', euros: '€', pounds: '£' } as Record<string, string>)[c!.toLowerCase()]}${n},000`],
  [new RegExp(String.raw`\b(${MONTH_NAMES})\s(\d{1,2})\b(?![\d:,.]\d|st|nd|rd|th)`),
    (_m, month, d) => `${month} ${d}${/1[123]$/.test(d!) ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<string, string>)[d!.slice(-1)] ?? 'th'}`],
  [/\b(\d+(?:\.\d+)?) percent\b/i, (_m, n) => `${n}%`],
];
/** A clause that only sets the scene ("every time…", "when…"): without its main clause, it tells no fact. */
const SUBORDINATE = /^\s*(?:and\s)?(?:every time|each time|whenever|when|if|because|since|while|once|unless|although)\b/i;
/** Words a new phrase starts on: a cut just before one of them leaves a phrase that is whole ("of" is not one: "out of date"). */
const PHRASE_START =
  /^(?:and|or|but|so|because|when|while|if|since|until|before|after|for|to|in|on|at|by|with|from|into|over|under|between|across|through|about|around|that|which|who|where|including|plus|than|per)$/i;
const PAST: Record<string, string> = {
  is: 'was', are: 'were', has: 'had', have: 'had', wants: 'wanted', needs: 'needed', takes: 'took', spends: 'spent', handles: 'handled',
  does: 'did', gets: 'got', goes: 'went', runs: 'ran', keeps: 'kept', loses: 'lost', costs: 'cost', make: 'made', makes: 'made', returns: 'returned',
  "you're": 'you were', 'you’re': 'you were', "it's": 'it was', 'it’s': 'it was', "that's": 'that was', 'that’s': 'that was',
};
const ADJECTIVE = /^[a-z]{4,}(?:ic|al|ous|ive|ful|less|ary|ible|able)$/;
const DETERMINER = /^(?:a|an|the|some|our|your|their|its|this|that)$/i;
const DROPPABLE = new Set(['really', 'actually', 'just', 'still', 'also', 'very', 'quite', 'even', 'alone', 'pretty', 'basically', 'honestly', 'literally', 'totally', 'like', 'currently', 'probably', 'full', 'good', 'short', 'all', 'so', 'own']);

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
        const after = out.slice(m.index + word.length);
        if (keep(word)) continue;
        if (pass === 'swap' && /^(our|your|my|their)$/.test(lower) && (/^\s*own\b/i.test(after) || MEASURE.test(after))) continue;
        if (pass === 'swap' && /^(each|every)$/.test(lower) && ENDS_HERE.test(after)) continue;
        if (pass === 'swap' && lower === 'and' && (CLAUSE_FOLLOWS.test(after) || /^\s+then\b/i.test(after))) continue;
        if (pass === 'swap' && lower === 'with' && !THING_OR_PERSON_FOLLOWS.test(after)) continue;
        // "send you the results" has no "share you…", "send over" no "share over".
        if (pass === 'swap' && lower === 'send' && /^\s+(?:you|me|us|them|him|her|it|over|across|out)\b/i.test(after)) continue;
        // "a hydraulic pump" is "a pump": an adjective between a determiner and its noun says least.
        const adjective = pass === 'drop' && ADJECTIVE.test(lower) && at > 0 && DETERMINER.test(matches[at - 1]![0]) && /^\s+[a-z]/.test(after);
        // "send over the report" is "send the report".
        const particle = pass === 'drop' && lower === 'over' && at > 0 && /^(?:send|share|pass|hand)$/i.test(matches[at - 1]![0]) && /^\s+[a-z]/i.test(after);
        if (pass === 'drop' && (DROPPABLE.has(lower) || adjective || particle) && !(lower === 'the' && at === run.from)) {
          const rest = out.slice(m.index + word.length);
          // A word dropped before a comma or the end takes its space with it: "on that line ," never.
          out = /^\s*(?:[,;:.!?)]|$)/.test(rest) ? `${out.slice(0, m.index).replace(/\s+$/, '')}${rest.replace(/^\s+/, '')}`
            : `${out.slice(0, m.index)}${rest.replace(/^\s+/, '')}`;
          edited = true;
        } else if (pass === 'swap' && lower === 'see' && /^\s+(?:how|what|whether|if|why|where)\b/i.test(after)) {
          // "to see how you get from X to Y": "understand" says it, and no phrase is cut short for it.
          out = `${out.slice(0, m.index)}understand${after}`;
          edited = true;
        } else if (pass === 'swap' && lower === 'and' && ACTION_FOLLOWS.test(after)) {
          out = `${out.slice(0, m.index).replace(/\s+$/, '')}, then${after}`;
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
      // "you were opening a fourth location" alone reads as the past: it is what the buyer said, and says so.
      if (shifted && !/^you mentioned\b/i.test(out)) out = `you mentioned ${out.replace(/^(?:You|Your|The|A|An|It|That|This|There|Nothing|No|Every|Each|If|When)\b/, (w) => w.toLowerCase())}`;
      if (shifted) continue;
    }
    if (!edited) {
      // The figure written another way: "fifteen minutes" → "15 minutes" says the same and breaks the run.
      const from = matches[run.from]!.index;
      const to = matches[run.to]!.index + matches[run.to]![0].length;
      for (const [pattern, form] of FIGURE_FORMS) {
        const m = pattern.exec(out.slice(from, to + 20));
        if (!m || m.index >= to - from) continue;
        out = `${out.slice(0, from + m.index)}${form(...m)}${out.slice(from + m.index + m[0].length)}`;
        edited = true;
        break;
      }
      if (edited) continue;
    }
    if (!edited) {
      // Nothing small breaks it: the text ends inside the run where a phrase ends whole ("140 hours a month", never
      // "140 hours last", "fifteen minutes every" or "between the repair"), and never drops the figure that follows;
      // with no such place, the clause goes and what came before it stays.
      const figureIn = (ms: RegExpMatchArray[]) => ms.some((w) => /\d/.test(w[0]) || NUMBER_WORDS[w[0].toLowerCase()] !== undefined);
      for (let end = run.from + 6; end >= run.from + 2; end--) {
        const word = matches[end]!;
        const next = matches[end + 1];
        if (DANGLING_WORD.test(word[0])) continue;
        // "$10,000" is counted as two words: no cut between them.
        if (/^[,.]\d/.test(out.slice(word.index + word[0].length))) continue;
        // "a board pack built" without its "on …": a participle keeps what it was built on.
        if (/ed$/i.test(word[0]) && /^(?:on|in|for|with|by|from|to|at|into|around)$/i.test(matches[end + 1]?.[0] ?? '')) continue;
        const gap = next ? out.slice(word.index + word[0].length, next.index) : '';
        if (next && !/[,;:(—–]/.test(gap) && !PHRASE_START.test(next[0])) continue;
        // "nothing goes into the trial" without its "until…" says the opposite: a denial keeps its condition.
        if (/^(?:until|unless|except|without|if|only)$/i.test(next?.[0] ?? '') &&
          /\b(?:nothing|no|not|never|nobody|none|cannot|\w+n't)\b/i.test(out.slice(0, word.index))) continue;
        if (figureIn(matches.slice(end + 1)) && !figureIn(matches.slice(run.from, end + 1))) continue;
        // "between the repair the scrap" or "Sweden, Germany" without the rest of its list: a list stays whole or goes.
        if (/^(?:and|or)$/i.test(next?.[0] ?? '') && (out.slice(matches[Math.max(run.from, end - 2)]!.index, word.index).includes(',') ||
          matches.slice(Math.max(run.from, end - 5), end + 1).some((w) => /^between$/i.test(w[0])))) continue;
        // "from sensors" without its "to dollars" is half a range: the range stays whole or goes.
        if (/^to$/i.test(next?.[0] ?? '') && matches.slice(Math.max(run.from, end - 3), end + 1).some((w) => /^from$/i.test(w[0]))) continue;
        const kept = out.slice(0, word.index + word[0].length).replace(/[,;:\s]+$/, '');
        // "every time you changed something", cut from its main clause, says nothing: the clause goes instead.
        if (SUBORDINATE.test(kept.slice(kept.lastIndexOf(':') + 1))) break;
        return kept;
      }
      const before = out.slice(0, matches[run.from]!.index).replace(/[,;:\s]+$/, '').replace(/\s(?:and|but|so|or|plus)$/i, '');
      return before.split(/\s+/).length >= 3 && !DANGLING_WORD.test(before.split(/\s+/).at(-1)!) ? before : '';
    }
  }
  return out;
}
