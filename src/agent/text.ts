// Text helpers for the rules that read a stranger's words, in time linear in them (DESIGN §10).

/**
 * `text` without the characters at its end that `trimmed` (one character's class) matches: a loop from the end,
 * where `/[…]+$/` reads a long run again from each of its characters.
 */
export function trimEndOf(text: string, trimmed: RegExp): string {
  let end = text.length;
  while (end > 0 && trimmed.test(text.charAt(end - 1))) end--;
  return text.slice(0, end);
}

/** What two facts are the same by: their words in lower case, without the punctuation and spacing between them. */
export function factKey(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
}
