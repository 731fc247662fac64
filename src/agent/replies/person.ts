// Whom a referral points to: the person named after the phrase that points ("please talk to Maria Lopez, our CFO",
// "wenden Sie sich an Frau Katrin Vogel"), and an address given with them. Read in the rest of the phrase's sentence
// only, so that a sign-off's name ("Best, Dana") is never taken for the person.
import { REFERRAL } from './cues.ts';
import { PERSON_EMAIL_MAX, PERSON_NAME_MAX, type ReferredPerson } from './types.ts';

/** How far after the phrase a name is looked for. */
const WINDOW = 120;
/** Two or three capitalised words: "Maria Lopez", "James O'Connor", "Diego Fernández". */
const NAME = /\p{Lu}[\p{L}'’-]{0,40}(?: \p{Lu}[\p{L}'’-]{0,40}){1,3}/u;
const TITLES = new Set(['mr', 'mrs', 'ms', 'dr', 'herr', 'herrn', 'frau', 'm', 'mme', 'mlle', 'monsieur', 'madame', 'sr', 'sra', 'srta', 'don', 'dona', 'doña', 'señor', 'señora']);
/** Capitalised words that begin a sentence or name a team, never a person. */
const NOT_NAMES = new Set([
  'i', 'we', 'he', 'she', 'they', 'our', 'the', 'please', 'thanks', 'thank', 'best', 'ich', 'wir', 'sie', 'er', 'unser', 'unsere', 'bitte',
  'je', 'nous', 'il', 'elle', 'notre', 'merci', 'yo', 'nosotros', 'el', 'ella', 'nuestro', 'nuestra', 'gracias', 'it', 'hr', 'it-abteilung',
]);
const EMAIL = /[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/;
const SENTENCE_END = /[.!?;\n](?:\s|$)/;

function nameIn(text: string): string | null {
  const match = NAME.exec(text);
  if (!match) return null;
  const words = match[0].split(' ');
  const titled = TITLES.has(words[0]!.replace(/\.$/, '').toLowerCase());
  while (words.length > 0 && TITLES.has(words[0]!.replace(/\.$/, '').toLowerCase())) words.shift();
  if (words.length === 0 || NOT_NAMES.has(words[0]!.toLowerCase())) return null;
  // A single word is a name only after a title ("Herrn Brandt"); else it is a team or the start of a sentence.
  if (words.length < 2 && !titled) return null;
  return words.join(' ').slice(0, PERSON_NAME_MAX);
}

/** The person the first pointing phrase of `text` names (`said` is `text` normalised); null when none names one. */
export function referredPerson(text: string, said: string): ReferredPerson | null {
  for (let cue = REFERRAL.find(said); cue; cue = REFERRAL.find(said, cue.end)) {
    let window = text.slice(cue.end, cue.end + WINDOW);
    const end = SENTENCE_END.exec(window);
    if (end) window = window.slice(0, end.index);
    const name = nameIn(window);
    const email = EMAIL.exec(window)?.[0].slice(0, PERSON_EMAIL_MAX) ?? null;
    if (name || email) return { name, email };
  }
  return null;
}
