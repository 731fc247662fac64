// Cutting API keys out of log lines: the logger of every leadrun process writes each line through redactSecrets.

// An API key: "sk_", 32 random characters and a 6-character checksum (src/domain/keys/keys.ts). In a URL any of its
// characters may come percent-encoded, once or more (`sk%5F…`, `%73k%255F…`): each is matched as itself or as its
// %XX escape behind up to three further encodings of the `%` (`%25`). A token longer than a key is cut too.
const ENCODED = '%(?:25){0,3}';
const KEY_CHAR = `(?:[0-9A-Za-z]|${ENCODED}(?:3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]))`;
const API_KEY_IN_TEXT = new RegExp(`(?:s|${ENCODED}73)(?:k|${ENCODED}6[Bb])(?:_|${ENCODED}5[Ff])(${KEY_CHAR}{7})${KEY_CHAR}{31}`, 'g');
const ESCAPED_KEY_CHAR = new RegExp(KEY_CHAR, 'g');

function decodeKeyChars(text: string): string {
  return text.replace(ESCAPED_KEY_CHAR, (char) => {
    let decoded = char;
    while (decoded.length > 1) decoded = decodeURIComponent(decoded);
    return decoded;
  });
}

/**
 * A log line with every API key in it cut to its public prefix (the 10 characters the UI shows), however it was
 * percent-encoded. Keys belong in the Authorization header, which is never logged, but a client may put one in a
 * URL, a field or a header of its own.
 */
export function redactSecrets(line: string): string {
  if (!line.includes('sk') && !line.includes('%')) return line;
  return line.replace(API_KEY_IN_TEXT, (_key, prefix: string) => `sk_${decodeKeyChars(prefix)}[redacted]`);
}
