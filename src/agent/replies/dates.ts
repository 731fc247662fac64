// The days a reply names, read relative to its Date header in the sender's own UTC offset: "back on Monday", "de retour
// le 3 mars", "bis einschließlich 14.03.", "hasta el 5 de mayo" (chrono-node, with a parser of its own for the
// day-and-month "14.03." that German, French and Spanish write), and the periods a "not now" names: a quarter, a
// season, a month, next month or year. Only the start of a reply's own text is read (DATE_TEXT_MAX): a date that
// matters is said early, and chrono's patterns then run over a bounded text.
import type { Chrono, Parser } from 'chrono-node';
// The four languages' parsers alone: chrono-node's index loads a dozen, 2.5 times the CPU to load in each new thread.
import * as de from 'chrono-node/de';
import * as en from 'chrono-node/en';
import * as es from 'chrono-node/es';
import * as fr from 'chrono-node/fr';
import { cues, normalise } from './cues.ts';
import { dayAt, type Written } from './written.ts';

/** How much of a reply's own text is searched for dates. */
export const DATE_TEXT_MAX = 2000;
/** A date further ahead than this is not an absence's end (a signature's "since 1998", a typo's year). */
const ABSENCE_MAX_DAYS = 400;
const DAY_MS = 86_400_000;

interface Found {
  index: number;
  end: number;
  day: string;
}

/** "14.03." and "20.3.2026": day first, then month, each followed by a dot. */
const dottedDay: Parser = {
  pattern: () => /(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})?(?!\d)/,
  extract: (_context, match) => {
    const day = Number(match[1]);
    const month = Number(match[2]);
    if (day < 1 || day > 31 || month < 1 || month > 12) return null;
    const year = match[3] ? Number(match[3].length === 2 ? `20${match[3]}` : match[3]) : undefined;
    return { day, month, ...(year ? { year } : {}) };
  },
};

function withDottedDays(parser: Chrono): Chrono {
  const copy = parser.clone();
  copy.parsers.push(dottedDay);
  return copy;
}

type Language = 'en' | 'de' | 'fr' | 'es';
/** Words that are common in one of the four languages and rare in the others. */
const FUNCTION_WORDS: Record<Language, Set<string>> = {
  en: new Set(['the', 'and', 'you', 'your', 'is', 'are', 'we', 'i', 'to', 'for', 'of', 'on', 'with', 'this', 'will', 'be', 'back', 'my']),
  de: new Set(['der', 'die', 'das', 'und', 'ich', 'sie', 'wir', 'nicht', 'ist', 'bin', 'mit', 'fur', 'im', 'bis', 'ab', 'uns', 'ihre', 'ihr']),
  fr: new Set(['le', 'les', 'et', 'je', 'vous', 'nous', 'est', 'suis', 'pas', 'pour', 'une', 'des', 'du', 'au', 'avec', 'mon', 'mes', 'serai']),
  es: new Set(['el', 'los', 'las', 'y', 'que', 'por', 'para', 'estoy', 'es', 'mi', 'su', 'con', 'una', 'del', 'hasta', 'estare', 'gracias']),
};

/** The language most of the text's common words are of; English when none stands out. */
export function languageOf(said: string): Language {
  const counts: Record<Language, number> = { en: 0, de: 0, fr: 0, es: 0 };
  for (const [word] of said.matchAll(/[\p{L}']+/gu)) {
    for (const language of ['en', 'de', 'fr', 'es'] as const) if (FUNCTION_WORDS[language].has(word)) counts[language] += 1;
  }
  return (['de', 'fr', 'es'] as const).reduce<Language>((best, language) => (counts[language] > counts[best] ? language : best), 'en');
}

let parsers: Record<Language, Chrono> | null = null;
/** One parser per language, made when a thread first reads a date. */
function parserFor(language: Language): Chrono {
  parsers ??= { en: en.casual, de: withDottedDays(de.casual), fr: withDottedDays(fr.casual), es: withDottedDays(es.casual) };
  return parsers[language];
}

/** Every date the text names, read in its language, as days in the writer's offset. */
function namedDates(text: string, written: Written): Found[] {
  const reference = { instant: written.instant, timezone: written.offsetMinutes };
  return parserFor(languageOf(normalise(text))).parse(text, reference, { forwardDate: true }).map((result) => ({
    index: result.index,
    end: result.index + result.text.length,
    // A range ("from 6/1 through 6/12") by its last day.
    day: dayAt((result.end ?? result.start).date(), written.offsetMinutes),
  }));
}

// Periods, as a person puts off a conversation. Each becomes the first day of the period.
const QUARTERS = [1, 2, 3, 4].map((n) => cues([
  `q${n}`, `${n}q`, `${['first', 'second', 'third', 'fourth'][n - 1]} quarter`, `${n}. quartal`,
  `${['ersten', 'zweiten', 'dritten', 'vierten'][n - 1]} quartal`, `t${n}`, `${['premier', 'deuxieme', 'troisieme', 'quatrieme'][n - 1]} trimestre`,
  `${['primer', 'segundo', 'tercer', 'cuarto'][n - 1]} trimestre`,
]));
const NEXT_QUARTER = cues(['next quarter', 'nachstes quartal', 'nachsten quartal', 'trimestre prochain', 'prochain trimestre', 'proximo trimestre']);
const NEXT_MONTH = cues(['next month', 'nachsten monat', 'nachster monat', 'mois prochain', 'proximo mes', 'mes que viene']);
const NEXT_YEAR = cues(['next year', 'new year', 'nachstes jahr', 'nachsten jahr', 'neuen jahr', "l'annee prochaine", 'annee prochaine', 'nouvel an', 'proximo ano', 'ano que viene']);
/** Seasons by the month they start in (meteorological seasons; "after the summer" is September). */
const SEASONS: Array<[number, ReturnType<typeof cues>]> = [
  [3, cues(['spring', 'fruhjahr', 'fruhling', 'printemps', 'primavera'])],
  [6, cues(['summer', 'sommer', "l'ete", 'cet ete', 'verano'])],
  [9, cues(['after the summer', 'autumn', 'fall', 'nach dem sommer', 'herbst', "apres l'ete", 'automne', 'rentree', 'despues del verano', 'otono'])],
  [12, cues(['winter', 'hiver', 'invierno'])],
];
const MONTHS = [
  ['january', 'januar', 'janvier', 'enero'], ['february', 'februar', 'fevrier', 'febrero'], ['march', 'marz', 'mars', 'marzo'],
  ['april', 'avril', 'abril'], ['may', 'mai', 'mayo'], ['june', 'juni', 'juin', 'junio'], ['july', 'juli', 'juillet', 'julio'],
  ['august', 'aout', 'agosto'], ['september', 'septembre', 'septiembre'], ['october', 'oktober', 'octobre', 'octubre'],
  ['november', 'novembre', 'noviembre'], ['december', 'dezember', 'decembre', 'diciembre'],
].map((names) => cues(names));
/** A month name is a time only after one of these ("may" is a verb, "mars" a planet). */
const BEFORE_MONTH = /(?:^|[^\p{L}])(in|by|after|until|from|early|mid|late|of|im|ab|nach|bis|anfang|mitte|ende|en|apres|debut|fin|jusqu'en|courant|para|despues de|desde|principios de|finales de|hasta)\s+$/u;

interface Day {
  year: number;
  month: number;
}

function firstDay({ year, month }: Day): string {
  const normal = new Date(Date.UTC(year, month - 1, 1));
  return normal.toISOString().slice(0, 10);
}

/** The first day of the next `month` (1-12) that starts after `today`. */
function nextStartOf(month: number, today: Day): string {
  return firstDay({ year: today.year + (month > today.month ? 0 : 1), month });
}

/** The periods a normalised text names, each as its first day after the day the reply was written. */
function namedPeriods(said: string, today: Day): Found[] {
  const found: Found[] = [];
  const each = (list: ReturnType<typeof cues>, day: () => string) => {
    for (let match = list.find(said); match; match = list.find(said, match.end)) found.push({ ...match, day: day() });
  };
  QUARTERS.forEach((list, i) => each(list, () => nextStartOf(i * 3 + 1, today)));
  each(NEXT_QUARTER, () => firstDay({ year: today.year, month: Math.floor((today.month - 1) / 3) * 3 + 4 }));
  each(NEXT_MONTH, () => firstDay({ year: today.year, month: today.month + 1 }));
  each(NEXT_YEAR, () => firstDay({ year: today.year + 1, month: 1 }));
  for (const [month, list] of SEASONS) each(list, () => nextStartOf(month, today));
  MONTHS.forEach((list, i) => {
    for (let match = list.find(said); match; match = list.find(said, match.end)) {
      if (BEFORE_MONTH.test(said.slice(Math.max(0, match.index - 20), match.index))) found.push({ ...match, day: nextStartOf(i + 1, today) });
    }
  });
  return found;
}

function today(written: Written): Day {
  const [year, month] = dayAt(written.instant, written.offsetMinutes).split('-').map(Number) as [number, number];
  return { year, month };
}

/**
 * The day an absence notice names for the return: the latest day it names from the day it was written on (the
 * return comes after "from … to …", "until …"); null when it names none.
 */
export function returnDay(text: string, written: Written): string | null {
  const head = text.slice(0, DATE_TEXT_MAX);
  const from = dayAt(written.instant, written.offsetMinutes);
  const until = dayAt(new Date(written.instant.getTime() + ABSENCE_MAX_DAYS * DAY_MS), written.offsetMinutes);
  const days = namedDates(head, written).map((d) => d.day).filter((day) => day >= from && day <= until);
  return days.length > 0 ? days.reduce((a, b) => (b > a ? b : a)) : null;
}

/**
 * The day a "not now" asks to be contacted again from: the first time it names after the day it was written (a
 * period by its first day: "in Q3", "im Herbst", "en septembre", "el próximo trimestre"); null when it names none.
 */
export function followUpDay(text: string, written: Written): string | null {
  const head = text.slice(0, DATE_TEXT_MAX);
  const from = dayAt(written.instant, written.offsetMinutes);
  const later = (found: Found[]) => found.filter((d) => d.day > from).sort((a, b) => a.index - b.index)[0]?.day ?? null;
  // A period ("in Q3", "next year") is what putting off names, read as its first day; chrono reads "next year" as a
  // year from today, and "this quarter" as tomorrow.
  return later(namedPeriods(normalise(head), today(written))) ?? later(namedDates(head, written));
}
