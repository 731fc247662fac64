// The phrases that say what a reply is, in English, German, French and Spanish. They are matched on normalised text
// (normalise below: lower case, accents taken off, one kind of apostrophe), as whole words; a phrase ending in `*`
// matches any ending of its last word ("desinscri*": désinscrire, désinscrivez-moi). Each list becomes one
// alternation of literals, which the regular-expression engine reads in time linear in the text.

/** Each non-ASCII character's plain lower-case form, as it is first met. */
const folded = new Map<number, number>([[0x2019, 0x27], [0x2018, 0x27], [0xdf, 0x73]]); // ’ ‘ → ', ß → s ("außer": "auser")
const utf16 = new TextDecoder('utf-16le');

function fold(code: number): number {
  let plain = folded.get(code);
  if (plain === undefined) {
    plain = (String.fromCharCode(code).normalize('NFD')[0] ?? '').toLowerCase().charCodeAt(0);
    if (Number.isNaN(plain)) plain = code;
    folded.set(code, plain);
  }
  return plain;
}

/**
 * Lower case without accents, one character for each character of `text`, so that a match's index is the same in
 * both. Written into one buffer: appending a character at a time to a string of 1 MiB costs more than linear.
 */
export function normalise(text: string): string {
  const out = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[i] = code < 0x80 ? (code >= 65 && code <= 90 ? code + 32 : code) : fold(code);
  }
  return utf16.decode(out);
}

export interface Cues {
  /** The first match at or after `from`: where it starts and ends; null when there is none. */
  find(text: string, from?: number): { index: number; end: number } | null;
  test(text: string): boolean;
}

export function cues(phrases: readonly string[]): Cues {
  const alternatives = [...phrases]
    // Longer phrases first, so that "after the summer" wins over "summer" where both start.
    .sort((a, b) => b.length - a.length)
    .map((phrase) => phrase.replace(/[.?+^$()[\]{}|\\]/g, '\\$&').replace(/\*$/, '\\p{L}*').replace(/ /g, '\\s+'));
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}])`, 'gu');
  return {
    find(text, from = 0) {
      pattern.lastIndex = from;
      const match = pattern.exec(text);
      return match ? { index: match.index, end: match.index + match[0].length } : null;
    },
    test(text) {
      return this.find(text) !== null;
    },
  };
}

/** A machine's notice that the message was not delivered (when no multipart/report header says so). */
export const BOUNCE_SUBJECT = cues([
  'undeliverable', 'undelivered mail', 'undeliverable mail', 'delivery status notification', 'delivery failure', 'failure notice',
  'returned mail', 'mail delivery failed', 'delivery has failed', 'unzustellbar', 'nicht zustellbar', 'non remis', 'non distribuable',
  'echec de la remise', 'no se puede entregar', 'no entregado', 'error de entrega',
]);
export const BOUNCE_SENDER = /^(.*<)?\s*(mailer-daemon|postmaster)@/i;

/** Subjects that mark an absence notice (Outlook, Exchange and Gmail write them in the recipient's language). */
export const ABSENCE_SUBJECT = cues([
  'automatic reply', 'out of office', 'out of the office', 'away', 'autoreply', 'auto-reply', 'abwesenheitsnotiz', 'automatische antwort',
  'abwesend', 'reponse automatique', 'absence du bureau', 'absent', 'respuesta automatica', 'fuera de la oficina', 'ausente',
]);

/** An absence in the text. */
export const ABSENCE = cues([
  'out of office', 'out of the office', 'ooo', 'on vacation', 'on holiday', 'on leave', 'parental leave', 'maternity leave',
  'paternity leave', 'annual leave', 'sick leave', 'away from the office', 'away from my desk', 'limited access to email',
  'limited access to e-mail', 'no access to email', 'no access to e-mail', "i'm away", 'i am away', 'currently away', 'away at',
  'will be back', 'be back on', 'upon my return', 'when i return', 'when i am back', "when i'm back", 'back in the office',
  'nicht im buro', 'abwesend', 'im urlaub', 'in urlaub', 'abwesenheit', 'wieder im buro', 'keinen zugriff', 'elternzeit',
  'ausser haus', 'auser haus', 'auf dienstreise', 'wieder erreichbar', 'absent', 'absente', 'en conge', 'en vacances', 'de retour',
  'hors du bureau', 'mon retour', 'acces limite', 'fuera de la oficina', 'de vacaciones', 'ausente', 'de vuelta', 'a mi regreso',
  'acceso limitado', 'estare fuera', 'baja por maternidad', 'baja por paternidad',
]);

/** A machine's answer that is not an absence: a ticket, an unmonitored mailbox, a receipt. */
export const AUTOMATED = cues([
  'automated response', 'automated reply', 'automated message', 'automatic response', 'automatic reply', 'auto-reply',
  'automatically generated', 'this mailbox is not monitored', 'mailbox is not monitored', 'do not reply to this', 'please do not reply',
  'has been received', 'we have received your', 'ticket number', 'automatische antwort', 'automatisch generiert', 'automatisch erstellt',
  'wir haben ihre anfrage erhalten', 'wir haben ihre nachricht erhalten', 'wir haben ihre e-mail erhalten', 'ist bei uns eingegangen',
  'reponse automatique', 'message automatique', 'nous avons bien recu votre', 'accuse de reception', 'ne pas repondre',
  'respuesta automatica', 'mensaje automatico', 'hemos recibido su', 'hemos recibido tu', 'no responda', 'no responder',
]);
export const AUTOMATED_SUBJECT = cues(['accuse de reception', 'ticket', 'auto-response', 'automated response', 'read receipt', 'lesebestatigung']);

/** Asking to hear nothing more. */
export const UNSUBSCRIBE = cues([
  'unsubscribe*', 'remove me', 'remove my email', 'remove my address', 'remove my name', 'remove us', 'take me off', 'take us off',
  'off your list', 'off your mailing list', 'off this list', 'stop emailing', 'stop e-mailing', 'stop mailing', 'stop contacting',
  'stop sending', 'stop writing', 'do not call me', "don't call me", 'do not contact me', 'do not email me', 'do not e-mail me', 'do not write to me', "don't contact me",
  "don't email me", "don't e-mail me", "don't write to me", 'dont email me', 'dont contact me', 'never contact me', 'never email me',
  'opt me out', 'opt out', 'opt-out', 'no more emails', 'no more e-mails', 'no further emails', 'no further contact', 'delete my data',
  'delete my email', 'delete my details', 'delete my address', 'leave me alone', 'report it as spam', 'report you as spam',
  'abmelden', 'melden sie mich ab', 'abbestellen', 'austragen', 'tragen sie mich aus', 'aus ihrem verteiler', 'aus dem verteiler',
  'aus ihrer liste', 'keine weiteren e-mails', 'keine weiteren emails', 'keine weiteren mails', 'keine weiteren nachrichten',
  'keine e-mails mehr', 'keine emails mehr', 'nicht mehr kontaktieren', 'nicht mehr anschreiben', 'nicht mehr an', 'nicht mehr schreiben',
  'loschen sie meine', 'widerspreche', 'desinscri*', 'desabonn*', 'ne plus recevoir', 'ne souhaite plus recevoir', 'ne veux plus recevoir',
  'retirer mon adresse', 'retirez-moi', 'retirez moi', 'retirez mon', 'supprimer mon adresse', 'supprimez mon', 'ne plus me contacter',
  'ne me contactez plus', "ne m'ecrivez plus", "arretez de m'envoyer", "arretez de m'ecrire", 'cessez de', 'no me escriban',
  'no me escribas', 'no me contacten', 'no me contactes', 'no me envien', 'dejen de enviarme', 'dejen de escribirme',
  'dejen de contactarme', 'deja de escribirme', 'deja de enviarme', 'darme de baja', 'dar de baja', 'denme de baja', 'eliminen mi',
  'borren mi', 'quitenme', 'sacarme de', 'sacadme de', 'no quiero recibir', 'no deseo recibir',
]);
/** A reply that is nothing but the word (as a footer's "reply stop" asks). */
export const UNSUBSCRIBE_WORD = /^\W*(stop|stopp|unsubscribe|remove|remove me|abmelden|desinscription|desinscrire|baja|darme de baja)\W*$/;

/** Pointing to someone else: the person named after the phrase. */
export const REFERRAL = cues([
  'talk to', 'speak to', 'speak with', 'reach out to', 'get in touch with', 'contact', 'looping in', 'loop in', 'looped in',
  'forwarded', 'forwarding', 'the right person', 'the best person', 'a better person', 'the person you want', 'cc-ing', "cc'ing",
  'copying in', 'handles this', 'is responsible for', 'in charge of', 'wenden sie sich an', 'wende dich an', 'sprechen sie mit',
  'kontaktieren sie', 'ansprechpartner ist', 'ansprechpartnerin ist', 'zustandig ist', 'weitergeleitet an', 'contacter', 'contactez',
  'adressez-vous a', 'la bonne personne est', 'la personne a contacter', 'en copie', 'transmis a', 'hable con', 'hablar con',
  'contacte a', 'contacta a', 'contactar a', 'contactar con', 'la persona indicada es', 'el responsable es', 'la responsable es',
  'reenviado a', 'en copia',
]);

/** Not now, perhaps later. */
export const NOT_NOW = cues([
  'not right now', 'not now', 'not at the moment', 'not at this time', 'not a priority', 'not the right time', 'circle back',
  'reach out again', 'reach back out', 'check back', 'check in again', 'follow up in', 'follow up next', 'get back to me in',
  'try me again', 'try again in', 'ping me in', 'ping me again', 'revisit', 'touch base in', 'touch base again', 'later this year',
  "timing isn't right", 'timing is not right', 'timing is off', 'bad timing', 'maybe later', 'perhaps later', 'no budget',
  'budget is frozen', 'budget freeze', 'next quarter', 'next year', 'not this quarter', 'not this year', 'in a few months',
  'momentan nicht', 'derzeit nicht', 'aktuell nicht', 'im moment nicht', 'zurzeit nicht', 'keine kapazitat*', 'nicht der richtige zeitpunkt',
  'zu einem spateren zeitpunkt', 'spater im jahr', 'nachstes quartal', 'nachsten quartal', 'nachstes jahr', 'nachsten jahr',
  'noch einmal melden', 'wieder auf mich zu', 'pas le bon moment', 'pas pour le moment', "pas pour l'instant", 'pas maintenant',
  'pas en ce moment', 'plus tard', 'recontactez-moi', 'recontactez moi', 'recontacter', 'revenez vers moi', 'reprenez contact',
  "l'annee prochaine", 'le trimestre prochain', 'prochain trimestre', 'a la rentree', 'ahora no', 'ahora mismo no',
  'no es buen momento', 'no es el momento', 'mas adelante', 'el proximo trimestre', 'el proximo ano', 'el ano que viene',
  'vuelva a contactar*', 'vuelve a contactar*', 'escribeme de nuevo', 'escribame de nuevo', 'en otro momento', 'dentro de unos meses',
]);

/** No, and no later either. */
export const NOT_INTERESTED = cues([
  'not interested', 'no interest', 'no thanks', 'no thank you', 'not for us', 'not a fit', 'not a good fit', 'not the right fit',
  'all set with', "we're good", 'we are good', 'happy with our current', 'our current provider', 'our current tool', 'our current vendor',
  'our current solution', 'already use', 'already have', 'already work with', 'pass on this', "we'll pass", 'we will pass',
  "not something we'd pursue", 'not something we would pursue', 'not looking', "don't need", 'do not need',
  'kein interesse', 'nicht interessiert', 'kein bedarf', 'nein danke', 'brauchen wir nicht', 'bereits eine losung', 'nutzen bereits',
  'pas interesse*', 'ne nous interesse', "ne m'interesse", 'non merci', 'pas besoin', 'deja une solution', 'notre outil actuel',
  'notre solution actuelle', 'no estamos interesad*', 'no me interesa', 'no nos interesa', 'no gracias', 'no necesitamos',
  'ya tenemos', 'ya usamos', 'ya trabajamos con',
]);

/** Yes, or a step towards it. */
export const INTERESTED = cues([
  'interested', 'interesting', 'sounds good', 'sounds great', "let's talk", "let's chat", "let's do it", "let's meet",
  "let's set", "let's schedule", 'happy to chat', 'happy to talk', 'happy to meet', 'works for me', 'works', 'count us in',
  'count me in', 'send over', 'send me', 'send pricing', 'can you send', 'could you send', 'book', 'schedule', 'set up a call',
  'call', 'demo', 'pricing', 'proposal', 'move forward', 'yes', 'sure', 'keen', 'love to', "we'd like", 'we would like',
  'on my calendar', 'interessant', 'interessiert', 'gerne', 'gern', 'passt', 'termin', 'ja', 'klingt gut', 'lassen sie uns',
  'schicken sie', 'senden sie', 'angebot', 'gesprach', 'oui', 'volontiers', 'me convient', 'ca me va', 'avec plaisir',
  "m'envoyer", 'envoyez-moi', 'rendez-vous', 'appel', 'parlons', 'interesse*', 'proposition', 'me interesa', 'nos interesa',
  'interesad*', 'perfecto', 'de acuerdo', 'podemos hablar', 'hablamos', 'me parece bien', 'adelante', 'claro', 'envieme',
  'enviame', 'propuesta', 'nos gustaria', 'reunion', 'llamada',
]);
