// A walk over an HTML document in one pass, in time linear in its size, for pages that strangers wrote (DESIGN §10).
// htmlparser2's Tokenizer cuts the text into tags, attributes and text, and decodes entities. The open elements
// are kept here, the way a browser keeps them where it matters for reading text (optional end tags such as </li>,
// </p> and </td> are implied; </b> does not close the paragraph it was wrongly left open across), but within
// bounds: at most MAX_DEPTH elements are kept open, deeper ones are only counted by name; past MAX_ELEMENTS
// elements the walk stops; an attribute value longer than MAX_ATTRIBUTE_CHARS is dropped. Nothing recurses, and
// an end tag finds its element by the open elements' positions kept per name, never by scanning the stack
// (htmlparser2's Parser does, with Array#unshift and indexOf: quadratic in the depth).
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

export const MAX_DEPTH = 256;
export const MAX_ELEMENTS = 100_000;
export const MAX_ATTRIBUTE_CHARS = 8_192;
const MAX_ATTRIBUTE_NAME_CHARS = 64;

export type Attributes = ReadonlyMap<string, string>;

/** What a walk tells its visitor. `F` is what the visitor keeps for each open element. */
export interface HtmlVisitor<F> {
  /** The attributes the visitor reads (lower case); the others are skipped unread. */
  readonly attributes: ReadonlySet<string>;
  /** An element opens inside `parent` (undefined at the top); what it returns is handed back when it closes. */
  open(name: string, attributes: Attributes, parent: F | undefined): F;
  /** An element closes: its end tag, an implied end, an ancestor's end, or the end of the document. */
  close(element: F): void;
  /** An element deeper than MAX_DEPTH opens or closes; `parent` is the deepest element kept open. */
  deep(name: string, parent: F | undefined): void;
  /** Text, entities decoded, in pieces: one run of text may come as several calls. */
  text(text: string, parent: F | undefined): void;
}

/** Walks `html`, telling `visitor` of every element and every piece of text in document order. */
export function walkHtml<F>(html: string, visitor: HtmlVisitor<F>): void {
  new Walk(html, visitor).run();
}

const VOID = new Set([
  'area', 'base', 'basefont', 'bgsound', 'br', 'col', 'embed', 'frame', 'hr', 'img', 'input', 'keygen', 'link',
  'meta', 'param', 'source', 'track', 'wbr',
]);
const HEAD_CONTENT = new Set(['base', 'basefont', 'bgsound', 'link', 'meta', 'noframes', 'noscript', 'script', 'style', 'template', 'title']);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Raw text the Tokenizer hands over as text: when such an element is not kept, its text is dropped with it. */
const RAW_TEXT = new Set(['script', 'style']);
/** Formatting elements: an end tag of one does not close a block opened inside it (HTML's "adoption agency"). */
const FORMATTING = new Set(['b', 'big', 'code', 'em', 'font', 'i', 'nobr', 's', 'small', 'strike', 'strong', 'tt', 'u']);
const BLOCKS = new Set([
  'address', 'applet', 'article', 'aside', 'blockquote', 'body', 'button', 'caption', 'center', 'dd', 'details',
  'dialog', 'dir', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4',
  'h5', 'h6', 'head', 'header', 'hgroup', 'html', 'iframe', 'li', 'listing', 'main', 'marquee', 'menu', 'nav',
  'noembed', 'noframes', 'noscript', 'object', 'ol', 'p', 'pre', 'script', 'search', 'section', 'select', 'style',
  'summary', 'table', 'tbody', 'td', 'template', 'textarea', 'tfoot', 'th', 'thead', 'title', 'tr', 'ul', 'xmp',
]);

// The optional end tags: a start tag of `by` closes the innermost open element of `closes`, unless an element of
// `stops` lies between them (HTML's "scope": a <li> closes the <li> of its own list, not the one around the list).
const BUTTON_SCOPE = ['applet', 'button', 'caption', 'html', 'marquee', 'math', 'object', 'svg', 'table', 'td', 'template', 'th'];
const TABLE_SCOPE = ['html', 'table', 'template'];
const TABLE_PARTS = ['tbody', 'tfoot', 'thead'];
const OPTIONAL_ENDS: Array<{ closes: string[]; by: string[]; stops: string[] }> = [
  { closes: ['li'], by: ['li'], stops: [...BUTTON_SCOPE, 'menu', 'ol', 'ul'] },
  { closes: ['dd', 'dt'], by: ['dd', 'dt'], stops: [...BUTTON_SCOPE, 'dl'] },
  { closes: TABLE_PARTS, by: TABLE_PARTS, stops: TABLE_SCOPE },
  { closes: ['tr'], by: ['tr', ...TABLE_PARTS], stops: TABLE_SCOPE },
  { closes: ['td', 'th'], by: ['td', 'th', 'tr', ...TABLE_PARTS], stops: TABLE_SCOPE },
  { closes: ['option'], by: ['option', 'optgroup'], stops: ['datalist', 'select'] },
  {
    closes: ['p'],
    by: [
      'address', 'article', 'aside', 'blockquote', 'center', 'dd', 'details', 'dialog', 'dir', 'div', 'dl', 'dt',
      'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup',
      'hr', 'li', 'listing', 'main', 'menu', 'nav', 'ol', 'p', 'plaintext', 'pre', 'section', 'summary', 'table',
      'ul', 'xmp',
    ],
    stops: BUTTON_SCOPE,
  },
];
const GROUPS = OPTIONAL_ENDS.length;
/** For each tag name: the groups it belongs to, the groups it stops, and the groups its start tag closes. */
const GROUPS_OF = groupIndex();

function groupIndex(): Map<string, { member: number[]; stops: number[]; closes: number[] }> {
  const index = new Map<string, { member: number[]; stops: number[]; closes: number[] }>();
  const entry = (name: string) => {
    let found = index.get(name);
    if (!found) index.set(name, (found = { member: [], stops: [], closes: [] }));
    return found;
  };
  OPTIONAL_ENDS.forEach(({ closes, by, stops }, group) => {
    for (const name of closes) entry(name).member.push(group);
    for (const name of stops) entry(name).stops.push(group);
    for (const name of by) entry(name).closes.push(group);
  });
  return index;
}

interface OpenElement<F> {
  name: string;
  frame: F;
  /** Inside <svg> or <math>, where <x/> closes itself. */
  foreign: boolean;
}

const NO_ATTRIBUTES: Attributes = new Map();

class Walk<F> implements TokenizerCallbacks {
  private readonly html: string;
  private readonly visitor: HtmlVisitor<F>;
  private readonly tokenizer: Tokenizer;
  private readonly stack: Array<OpenElement<F>> = [];
  /** For each kept element and group, the stack index of the innermost open element of the group within reach, or -1. */
  private readonly reach = new Int32Array((MAX_DEPTH + 1) * GROUPS).fill(-1);
  /** For each stack length, the index of the innermost kept block element, or -1. */
  private readonly innermostBlock = new Int32Array(MAX_DEPTH + 1).fill(-1);
  /** The stack indices of the kept open elements, by name. */
  private readonly positions = new Map<string, number[]>();
  private readonly deepByName = new Map<string, number>();
  private deepCount = 0;
  private elements = 0;
  private stopped = false;
  /** The text of a <script> or <style> that is not kept is dropped until its end tag. */
  private droppingRawText = false;

  private tagName = '';
  private tagAttributes = new Map<string, string>();
  private attributeName: string | null = null;
  private attributeParts: string[] = [];
  private attributeChars = 0;

  constructor(html: string, visitor: HtmlVisitor<F>) {
    this.html = html;
    this.visitor = visitor;
    this.tokenizer = new Tokenizer({ decodeEntities: true }, this);
  }

  run(): void {
    this.tokenizer.write(this.html);
    if (!this.stopped) this.tokenizer.end();
    this.popTo(0);
  }

  // Tokenizer callbacks. The document is written in one piece, so the indices are indices into `html`.

  onopentagname(start: number, end: number): void {
    this.tagName = this.html.slice(start, end).toLowerCase();
    this.tagAttributes = new Map();
  }

  onattribname(start: number, end: number): void {
    this.attributeName = null;
    if (end - start > MAX_ATTRIBUTE_NAME_CHARS) return;
    const name = this.html.slice(start, end).toLowerCase();
    // The first of two attributes of the same name counts, as in a browser.
    if (!this.visitor.attributes.has(name) || this.tagAttributes.has(name)) return;
    this.attributeName = name;
    this.attributeParts = [];
    this.attributeChars = 0;
  }

  onattribdata(start: number, end: number): void {
    if (this.attributeName !== null) this.addToAttribute(this.html.slice(start, end));
  }

  onattribentity(codepoint: number): void {
    if (this.attributeName !== null) this.addToAttribute(String.fromCodePoint(codepoint));
  }

  onattribend(): void {
    if (this.attributeName !== null) this.tagAttributes.set(this.attributeName, this.attributeParts.join(''));
    this.attributeName = null;
  }

  onopentagend(): void {
    this.openElement(false);
  }

  onselfclosingtag(): void {
    this.openElement(true);
  }

  onclosetag(start: number, end: number): void {
    this.closeElement(this.html.slice(start, end).toLowerCase());
  }

  ontext(start: number, end: number): void {
    this.text(this.html.slice(start, end));
  }

  ontextentity(codepoint: number): void {
    this.text(String.fromCodePoint(codepoint));
  }

  oncdata(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
  onend(): void {}

  // The open elements.

  private addToAttribute(piece: string): void {
    this.attributeChars += piece.length;
    if (this.attributeChars > MAX_ATTRIBUTE_CHARS) this.attributeName = null;
    else this.attributeParts.push(piece);
  }

  private openElement(selfClosing: boolean): void {
    if (++this.elements > MAX_ELEMENTS) {
      this.stopped = true;
      this.tokenizer.pause();
      return;
    }
    const name = this.tagName;
    const attributes = this.tagAttributes.size > 0 ? this.tagAttributes : NO_ATTRIBUTES;
    if (this.deepCount === 0) this.closeImplied(name);
    const parent = this.stack.at(-1);
    // <x/> closes itself only in SVG and MathML (and as <svg/> or <math/>); in HTML it opens <x>.
    if (VOID.has(name) || (selfClosing && (parent?.foreign || name === 'svg' || name === 'math'))) {
      this.visitor.close(this.visitor.open(name, attributes, parent?.frame));
      return;
    }
    if (this.stack.length === MAX_DEPTH) {
      this.deepByName.set(name, (this.deepByName.get(name) ?? 0) + 1);
      this.deepCount += 1;
      if (RAW_TEXT.has(name)) this.droppingRawText = true;
      this.visitor.deep(name, parent?.frame);
      return;
    }
    const frame = this.visitor.open(name, attributes, parent?.frame);
    const depth = this.stack.length;
    this.stack.push({ name, frame, foreign: (parent?.foreign ?? false) || name === 'svg' || name === 'math' });
    const positions = this.positions.get(name);
    if (positions) positions.push(depth);
    else this.positions.set(name, [depth]);
    this.innermostBlock[depth + 1] = BLOCKS.has(name) ? depth : (this.innermostBlock[depth] ?? -1);
    const groups = GROUPS_OF.get(name);
    for (let group = 0; group < GROUPS; group++) {
      this.reach[(depth + 1) * GROUPS + group] = this.reach[depth * GROUPS + group] ?? -1;
    }
    for (const group of groups?.stops ?? []) this.reach[(depth + 1) * GROUPS + group] = -1;
    for (const group of groups?.member ?? []) this.reach[(depth + 1) * GROUPS + group] = depth;
  }

  /** The ends a start tag implies: of the document's head, a heading, and HTML's optional end tags. */
  private closeImplied(name: string): void {
    if (!HEAD_CONTENT.has(name) && name !== 'html' && name !== 'head') this.closeInnermost('head');
    const top = this.stack.at(-1);
    if (top && HEADINGS.has(name) && HEADINGS.has(top.name)) this.popTo(this.stack.length - 1);
    for (const group of GROUPS_OF.get(name)?.closes ?? []) {
      const at = this.reach[this.stack.length * GROUPS + group] ?? -1;
      if (at >= 0) this.popTo(at);
    }
  }

  private closeElement(name: string): void {
    this.droppingRawText = false;
    const deep = this.deepByName.get(name) ?? 0;
    if (deep > 0) {
      // The innermost element of that name is one of the deep ones: they are all inside the kept ones.
      this.deepByName.set(name, deep - 1);
      this.deepCount -= 1;
      this.visitor.deep(name, this.stack.at(-1)?.frame);
      return;
    }
    const at = this.positions.get(name)?.at(-1);
    if (at !== undefined) {
      // <b><p>text</b> more</p>: a browser keeps the paragraph open and "more" in it.
      if (FORMATTING.has(name) && (this.innermostBlock[this.stack.length] ?? -1) > at) return;
      this.popTo(at);
    } else if (name === 'p' || name === 'br') {
      // A browser reads a stray </p> as <p></p> and </br> as <br>.
      this.visitor.close(this.visitor.open(name, NO_ATTRIBUTES, this.stack.at(-1)?.frame));
    }
  }

  /** Closes the innermost open element named `name`, if one is open, and every element inside it. */
  private closeInnermost(name: string): void {
    const at = this.positions.get(name)?.at(-1);
    if (at !== undefined) this.popTo(at);
  }

  /** Closes the kept elements from index `depth` up, and every deep one. */
  private popTo(depth: number): void {
    if (this.stack.length > depth && this.deepCount > 0) {
      this.deepByName.clear();
      this.deepCount = 0;
      this.droppingRawText = false;
    }
    while (this.stack.length > depth) {
      const element = this.stack.pop() as OpenElement<F>;
      this.positions.get(element.name)?.pop();
      this.visitor.close(element.frame);
    }
  }

  private text(text: string): void {
    if (!this.droppingRawText) this.visitor.text(text, this.stack.at(-1)?.frame);
  }
}
