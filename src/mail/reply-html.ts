// The text of an HTML-only reply (src/mail/reply-reading.ts), read in a CPU pool thread: apart, so that the main
// thread, which needs the rest of reply-reading.ts for the reply check, does not load the HTML tokenizer.
import { walkHtml, type Attributes, type HtmlVisitor } from '../text/html-walk.ts';
import { MAX_BYTES_PER_MESSAGE } from './reply-limits.ts';

/** Elements whose content is not what the reply says: code, styles, the head, and the e-mail it quotes. */
const UNREAD = new Set(['head', 'script', 'style', 'template', 'title', 'blockquote']);
/** Where Gmail, Thunderbird and Outlook begin the quoted e-mail: nothing after it is the reply's. */
const QUOTE_MARKS = /\b(gmail_quote|moz-cite-prefix|divRplyFwdMsg)\b/;
const LINE_BREAKS = new Set([
  'address', 'article', 'br', 'dd', 'div', 'dl', 'dt', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li',
  'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul',
]);

/** What the text of an HTML-only message keeps for each open element: whether its text is read. */
class HtmlReplyText implements HtmlVisitor<boolean> {
  readonly attributes = new Set(['class', 'id']);
  #text = '';
  #quoteBegun = false;

  open(name: string, attributes: Attributes, parent: boolean | undefined): boolean {
    if (LINE_BREAKS.has(name)) this.#add('\n');
    if (QUOTE_MARKS.test(`${attributes.get('class') ?? ''} ${attributes.get('id') ?? ''}`)) this.#quoteBegun = true;
    return (parent ?? true) && !UNREAD.has(name);
  }

  close(): void {}

  deep(name: string): void {
    if (LINE_BREAKS.has(name)) this.#add('\n');
  }

  text(text: string, parent: boolean | undefined): void {
    if (parent ?? true) this.#add(text);
  }

  #add(text: string): void {
    if (!this.#quoteBegun && this.#text.length < MAX_BYTES_PER_MESSAGE) this.#text += text;
  }

  get value(): string {
    return this.#text.slice(0, MAX_BYTES_PER_MESSAGE);
  }
}

/**
 * The text of an HTML-only message, read by the project's own walk (src/text/html-walk.ts: one pass, no recursion, bounded
 * depth), as line breaks and words, with the quoted e-mail left out.
 */
export function htmlReplyText(html: string): string {
  const reader = new HtmlReplyText();
  walkHtml(html, reader);
  return reader.value;
}
