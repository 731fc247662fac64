// What RESEARCH reads from one HTML page of a company's website: its title, description and main text, the
// concrete statements in it (facts), a short summary, and the links to the pages worth reading next. Pure CPU
// work over a stranger's HTML: it runs in the CPU pool's threads (src/cpu), never on the event loop that answers
// HTTP, and every parser and pattern here is linear in the size of the page (DESIGN §10).
import { type Attributes, type HtmlVisitor, walkHtml } from '../text/html-walk.ts';
import type { Fact } from '../schemas/outputs.ts';
import { factKey } from './text.ts';

const MAX_FACTS_PER_PAGE = 6;
const MAX_SUMMARY_CHARS = 600;
const MAX_FACT_CHARS = 240;

/** What RESEARCH reads from one HTML page. */
export interface ParsedPage {
  url: string;
  title: string | null;
  description: string | null;
  headings: string[];
  /** The main text as blocks (paragraphs, list items, headings), page chrome removed. */
  blocks: string[];
  links: Array<{ url: string; text: string }>;
}

/** A page as RESEARCH keeps it: what it says about the company and where to read on. */
export interface PageReading {
  url: string;
  title: string | null;
  description: string | null;
  summary: string | null;
  facts: Fact[];
  /** Same-origin pages worth reading next (about, product, customers, pricing), best first. */
  followUps: string[];
}

/** Reads one page: parse, facts (at most 6, in page order), summary and up to `followUps` links to read next. */
export function readPage(input: { html: string; url: string; companyName: string | null; followUps: number }): PageReading {
  const page = parsePage(input.html, input.url);
  return {
    url: page.url,
    title: page.title,
    description: page.description,
    summary: summarise(page),
    facts: pageFacts(page, input.companyName),
    followUps: input.followUps > 0 ? pickFollowUpLinks(page, input.followUps) : [],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing: one walk over the document (src/text/html-walk.ts) reads everything at once. Which element holds the main
// text is known only at the end (the first <main>, else the only <article>, else <body>), so the text of each of
// the three is kept as it goes, each without its own chrome.

const MAX_TEXT_CHARS = 200_000;
const MAX_HEADINGS = 200;
const MAX_HEADING_CHARS = 1_000;
const MAX_LINKS = 5_000;
const MAX_LINK_TEXT_CHARS = 500;
const MAX_TITLE_CHARS = 1_000;

/** Elements whose content is never read as text. */
const REMOVED = new Set([
  'button', 'canvas', 'dialog', 'embed', 'form', 'iframe', 'noscript', 'object', 'script', 'select', 'style', 'svg',
  'template',
]);
/** Elements whose content a browser reads as plain text, so that no link inside them is one. */
const RAW_TEXT = new Set(['iframe', 'noembed', 'noframes', 'noscript']);
/** Page chrome: left out of a container's text when inside it. */
const CHROME_TAGS = new Set(['aside', 'footer', 'nav']);
const CHROME_ROLES = new Set(['banner', 'complementary', 'contentinfo', 'navigation']);
const BLOCK_TAGS = new Set([
  'address', 'article', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'h1', 'h2', 'h3',
  'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul',
]);
const READ_HEADINGS = new Set(['h1', 'h2', 'h3']);
const READ_ATTRIBUTES = new Set(['aria-hidden', 'class', 'content', 'hidden', 'href', 'id', 'name', 'property', 'role']);

// The three candidate containers, as bits of Frame.reading.
const BODY = 1;
const MAIN = 2;
const ARTICLE = 4;
const CONTAINERS = [BODY, MAIN, ARTICLE];

export function parsePage(html: string, url: string): ParsedPage {
  const reader = new PageReader(url);
  walkHtml(html, reader);
  return reader.page();
}

/** What the reader keeps for each open element. */
interface Frame {
  name: string;
  /** Inside an element whose content is never read (REMOVED). */
  removed: boolean;
  /** Inside an element whose content is plain text to a browser (RAW_TEXT). */
  rawText: boolean;
  /** The containers (bits) that read this element's text. */
  reading: number;
  /** The containers whose heading this element is. */
  headings: number;
  /** A header of the body held until it is known whether it is the page's header (see PageReader.open). */
  held: boolean;
  link: boolean;
  title: boolean;
  firstH1: boolean;
}

class PageReader implements HtmlVisitor<Frame> {
  readonly attributes = READ_ATTRIBUTES;
  private readonly url: string;
  private readonly containers = new Map(CONTAINERS.map((container) => [container, new ContainerText()]));
  private mainFound = false;
  private articles = 0;
  private bodyStarted = false;
  private readonly meta = new Map<string, string>();
  private title: TextCapture | null = null;
  private titleText: string | null = null;
  private h1: TextCapture | null = null;
  private h1Text: string | null = null;
  private readonly links: ParsedPage['links'] = [];
  private link: { url: string; text: TextCapture } | null = null;

  constructor(url: string) {
    this.url = url;
  }

  open(name: string, attributes: Attributes, parent: Frame | undefined): Frame {
    const removed = (parent?.removed ?? false) || REMOVED.has(name);
    const rawText = (parent?.rawText ?? false) || RAW_TEXT.has(name);
    const frame: Frame = {
      name, removed, rawText, reading: 0, headings: 0, held: false, link: false, title: false, firstH1: false,
    };
    const atTop = !parent || parent.name === 'html';
    const titleHere = name === 'title' && !this.bodyStarted && (atTop || parent?.name === 'head');
    if (!HEAD_ELEMENTS.has(name)) this.bodyStarted = true;

    if (!removed) {
      frame.reading = parent ? parent.reading : BODY;
      // The head's content, and a title before the body (a browser moves it into the head), are not the body's.
      if ((name === 'head' && atTop) || titleHere) frame.reading = 0;
      if (isChrome(name, attributes)) frame.reading &= name === 'html' || name === 'body' ? BODY : 0;
      if (!this.mainFound && (name === 'main' || attributes.get('role') === 'main')) {
        this.mainFound = true;
        frame.reading |= MAIN;
      }
      if (name === 'article' && ++this.articles === 1) frame.reading |= ARTICLE;
      // Without a main element, the page's own header (logo, menu) is chrome: a header at the top of the body, or
      // one with a menu in it. The latter is known only once its content has been read, so until it closes the
      // body's text holds it apart.
      const body = this.containerText(BODY);
      if ((name === 'nav' || name === 'ul') && body.holding) body.dropHeld();
      if (name === 'header' && frame.reading & BODY) {
        if (atTop || parent?.name === 'body') frame.reading &= ~BODY;
        else frame.held = true;
      }
    }

    if (BLOCK_TAGS.has(name)) this.endBlocks(frame.reading);
    if (frame.held) this.containerText(BODY).hold();
    if (READ_HEADINGS.has(name)) {
      for (const container of CONTAINERS) {
        if (frame.reading & container && this.containerText(container).startHeading()) frame.headings |= container;
      }
    }
    if (titleHere && this.title === null && this.titleText === null) {
      this.title = new TextCapture(MAX_TITLE_CHARS);
      frame.title = true;
    }
    if (name === 'h1' && this.h1 === null && this.h1Text === null) {
      this.h1 = new TextCapture(MAX_TITLE_CHARS);
      frame.firstH1 = true;
    }
    // Links are read everywhere, chrome included: the about and pricing links usually live in the nav and footer.
    const href = name === 'a' ? attributes.get('href') : undefined;
    if (href !== undefined && !rawText) frame.link = this.startLink(href);
    if (name === 'meta') this.readMeta(attributes);
    return frame;
  }

  close(frame: Frame): void {
    if (BLOCK_TAGS.has(frame.name)) this.endBlocks(frame.reading);
    for (const container of CONTAINERS) if (frame.headings & container) this.containerText(container).endHeading();
    if (frame.held) this.containerText(BODY).release();
    if (frame.link) this.endLink();
    if (frame.title && this.title) {
      this.titleText = clean(this.title.text());
      this.title = null;
    }
    if (frame.firstH1 && this.h1) {
      this.h1Text = clean(this.h1.text());
      this.h1 = null;
    }
  }

  deep(name: string, parent: Frame | undefined): void {
    if (BLOCK_TAGS.has(name)) this.endBlocks(parent ? parent.reading : BODY);
  }

  text(text: string, parent: Frame | undefined): void {
    const reading = parent ? parent.reading : BODY;
    for (const container of CONTAINERS) if (reading & container) this.containerText(container).add(text);
    this.title?.add(text);
    this.h1?.add(text);
    this.link?.text.add(text);
  }

  page(): ParsedPage {
    const meta = (key: string): string | null => clean(this.meta.get(key) ?? '') || null;
    const title = this.titleText || meta('og:title') || this.h1Text || null;
    const description = meta('description') ?? meta('og:description') ?? meta('twitter:description');
    // A page of article cards has no one article to prefer; then the whole body is read.
    const container = this.mainFound ? MAIN : this.articles === 1 ? ARTICLE : BODY;
    const { headings, blocks } = this.containerText(container).result();
    return { url: this.url, title, description, headings, blocks, links: this.links };
  }

  private containerText(container: number): ContainerText {
    return this.containers.get(container) as ContainerText;
  }

  private endBlocks(reading: number): void {
    for (const container of CONTAINERS) if (reading & container) this.containerText(container).endBlock();
  }

  private startLink(href: string): boolean {
    this.endLink();
    if (this.links.length >= MAX_LINKS) return false;
    try {
      const target = new URL(href, this.url);
      target.hash = '';
      this.link = { url: target.href, text: new TextCapture(MAX_LINK_TEXT_CHARS) };
      return true;
    } catch {
      return false; // Not a URL: ignore the link.
    }
  }

  private endLink(): void {
    if (!this.link) return;
    this.links.push({ url: this.link.url, text: clean(this.link.text.text()) });
    this.link = null;
  }

  /** The first of each: name="description" or "twitter:description" (any case), property="og:title" or "og:description". */
  private readMeta(attributes: Attributes): void {
    const content = attributes.get('content') ?? '';
    const name = attributes.get('name')?.toLowerCase();
    const property = attributes.get('property');
    for (const key of [name, property]) {
      if (key !== undefined && META_KEYS.has(key) && !this.meta.has(key)) this.meta.set(key, content);
    }
  }
}

const META_KEYS = new Set(['description', 'twitter:description', 'og:title', 'og:description']);
const HEAD_ELEMENTS = new Set(['base', 'head', 'html', 'link', 'meta', 'noscript', 'script', 'style', 'template', 'title']);

function isChrome(name: string, attributes: Attributes): boolean {
  if (CHROME_TAGS.has(name) || CHROME_ROLES.has(attributes.get('role') ?? '')) return true;
  if (attributes.get('aria-hidden') === 'true' || attributes.has('hidden')) return true;
  return (
    (attributes.get('id') ?? '').toLowerCase().includes('cookie') ||
    /cookie|consent/i.test(attributes.get('class') ?? '')
  );
}

/** Text up to a number of characters; the rest is not kept. */
class TextCapture {
  private readonly parts: string[] = [];
  private room: number;

  constructor(max: number) {
    this.room = max;
  }

  add(text: string): void {
    if (this.room <= 0) return;
    const taken = text.length <= this.room ? text : text.slice(0, this.room);
    this.parts.push(taken);
    this.room -= taken.length;
  }

  text(): string {
    return this.parts.join('');
  }
}

/**
 * The text of one container, as blocks split at block elements, and its headings, up to MAX_TEXT_CHARS. Held
 * parts (a header that may turn out to be chrome) are appended as they are read and cut off again if dropped.
 */
class ContainerText {
  private readonly blocks: string[] = [];
  private readonly headings: string[] = [];
  private block: string[] = [];
  private heading: TextCapture | null = null;
  private room = MAX_TEXT_CHARS;
  private readonly holds: Array<{ blocks: number; headings: number; dropped: boolean }> = [];

  add(text: string): void {
    if (this.room <= 0) return;
    const taken = text.length <= this.room ? text : text.slice(0, this.room);
    this.block.push(taken);
    this.room -= taken.length;
    this.heading?.add(taken);
  }

  endBlock(): void {
    if (this.block.length === 0) return;
    const block = clean(this.block.join(''));
    this.block = [];
    if (block) this.blocks.push(block);
  }

  /** Starts a heading unless one is open (a heading inside a heading is part of it). */
  startHeading(): boolean {
    if (this.heading) return false;
    this.heading = new TextCapture(MAX_HEADING_CHARS);
    return true;
  }

  endHeading(): void {
    const heading = clean(this.heading?.text() ?? '');
    this.heading = null;
    if (heading && this.headings.length < MAX_HEADINGS) this.headings.push(heading);
  }

  get holding(): boolean {
    return this.holds.length > 0;
  }

  hold(): void {
    this.endBlock();
    this.holds.push({ blocks: this.blocks.length, headings: this.headings.length, dropped: false });
  }

  /** Drops everything held: what is dropped is inside the outermost hold, so that one hold says it. */
  dropHeld(): void {
    const outermost = this.holds[0];
    if (outermost) outermost.dropped = true;
  }

  release(): void {
    this.endBlock();
    const hold = this.holds.pop();
    if (hold?.dropped) {
      this.blocks.length = hold.blocks;
      this.headings.length = hold.headings;
    }
  }

  result(): { headings: string[]; blocks: string[] } {
    this.endBlock();
    return { headings: this.headings, blocks: this.blocks };
  }
}

function clean(text: string): string {
  return text
    .replace(/[\u00a0\u2000-\u200b\u202f\u205f\u3000]/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/^[\s•·▪►→|–—-]+/, '')
    .trim();
}

// ---------------------------------------------------------------------------------------------------------------
// Sentences and facts

const SENTENCE_BREAK = /(?<=[.!?]["')\]”’]?)\s+(?=["'(“‘]?[A-Z0-9])/;
const ABBREVIATION = /\b(inc|ltd|llc|co|corp|dr|mr|mrs|ms|st|no|vs|etc|e\.g|i\.e|approx|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.$/i;
const INITIAL = /\b[A-Z]\.$/;

export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  let sentence: string[] = [];
  for (const piece of text.split(SENTENCE_BREAK)) {
    // "Acme Inc. serves…" and "U.S. teams" are one sentence, not two. Only the end of the piece before is looked
    // at (its last characters, longer than any abbreviation), never the sentence as it grows.
    const previous = sentence.at(-1);
    if (previous !== undefined) {
      const end = previous.slice(-16);
      if (!ABBREVIATION.test(end) && !INITIAL.test(end)) {
        sentences.push(sentence.join(' '));
        sentence = [];
      }
    }
    sentence.push(piece);
  }
  if (sentence.length > 0) sentences.push(sentence.join(' '));
  return sentences.map(clean).filter(Boolean);
}

const SPECIFIC_CUES: Array<[RegExp, number]> = [
  [/\d/, 2],
  [/\b(customers?|clients?|companies|businesses|teams|brands|retailers|users|members|organi[sz]ations|enterprises|partners|merchants|shippers|carriers|hospitals|schools|agencies|countries|cities)\b/i, 1],
  [/\b(founded|established|since (?:19|20)\d\d|headquartered|headquarters|based in|offices? (?:in|across)|employees|people in|team of|raised|funding|series [a-e]\b|backed by|acquired)/i, 2],
  [/\b(trusted by|used by|relied on by|serv(?:es|ing)|helps?|powers?|works? with|customers include|clients include|partners? with)\b/i, 1],
  [/\b(platform|software|app|application|product|service|api|tool|solution|marketplace|network|integrations?)\b/i, 1],
  [/\b(we (?:build|make|provide|offer|help|run|operate|design|develop|process|handle|deliver)|(?:is|are) (?:a|an|the) )/i, 1],
  [/\b(soc ?2|iso ?\d{4,5}|gdpr|hipaa|certified|award)/i, 1],
  [/\b(per (?:month|year|user|seat)|\/ ?(?:mo|month|user|seat)\b|plans? (?:start|from)|free trial|pricing)/i, 1],
];
const FLUFF = /\b(world-class|best-in-class|revolutionary|cutting-edge|next-gen\w*|seamless\w*|unlock|supercharge|empower\w*|synerg\w*|game-chang\w*|leverag\w*|magic)\b/i;
const BOILERPLATE =
  /(cookie|privacy|terms of (use|service)|all rights reserved|©|copyright|subscribe|newsletter|sign (in|up)|log ?in\b|javascript|your browser|click here|read more|learn more|get started|book a demo|request a demo|contact (us|sales)|skip to)/i;

function factScore(sentence: string, companyNames: string[]): number {
  if (sentence.length < 15 || sentence.length > MAX_FACT_CHARS) return 0;
  const words = sentence.split(' ').length;
  const hasDigit = /\d/.test(sentence);
  if (words < (hasDigit ? 3 : 5) || words > 45) return 0;
  if (sentence.endsWith('?') || BOILERPLATE.test(sentence)) return 0;
  // A bare number or a price tag alone ("$49", "2024") states nothing.
  if (!/[a-z]{3,}/i.test(sentence.replace(/\d/g, ''))) return 0;
  // A heading or tag line ("Trusted by carriers across Europe") counts only when it carries a number.
  if (!/[.!?…"”')]$/.test(sentence) && !hasDigit) return 0;
  let score = 0;
  for (const [cue, weight] of SPECIFIC_CUES) if (cue.test(sentence)) score += weight;
  const lower = sentence.toLowerCase();
  if (companyNames.some((name) => lower.includes(name))) score += 1;
  if (FLUFF.test(sentence)) score -= 1;
  // "Together they drive…" means nothing once it stands alone.
  if (/^(together |and |but |so )?(they|it|this|these|those|that|he|she)\b/i.test(sentence)) score -= 1;
  return score;
}

const LEGAL_FORMS = new Set(['inc', 'ltd', 'llc', 'gmbh', 'ag', 'sa', 'sas', 'bv', 'plc', 'limited', 'corp', 'corporation', 'co']);

/** The company's name as a page would write it: "Kestrel Logistics Ltd" also matches "Kestrel". */
function nameVariants(companyName: string | null): string[] {
  if (!companyName) return [];
  const full = companyName.trim().toLowerCase();
  const words = full.split(/\s+/);
  const last = words.at(-1) ?? '';
  const legalForm = words.length > 1 && LEGAL_FORMS.has(last.endsWith('.') ? last.slice(0, -1) : last);
  const rest = words.slice(0, -1).join(' ');
  // "Acme, Inc." → "acme"
  const bare = !legalForm ? full : rest.endsWith(',') || rest.endsWith('.') ? rest.slice(0, -1) : rest;
  const first = bare.split(' ')[0] ?? '';
  return [...new Set([full, bare, first.length >= 4 ? first : ''])].filter(Boolean);
}

/** The concrete statements of a page, best first up to the per-page cap, then back in page order. */
export function pageFacts(page: ParsedPage, companyName: string | null): Fact[] {
  const candidates = [page.description ?? '', ...page.blocks].flatMap(splitSentences);
  const names = nameVariants(companyName);
  const scored = candidates
    .map((text, position) => ({ text, position, score: factScore(text, names) }))
    .filter((candidate) => candidate.score >= 2);
  const seen = new Set<string>();
  const unique = scored.filter((candidate) => {
    const key = factKey(candidate.text);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, MAX_FACTS_PER_PAGE)
    .sort((a, b) => a.position - b.position)
    .map(({ text }) => ({ text, source: page.url }));
}


/** A few sentences of the main text: the paragraphs that read as prose, not menus or tag lines. */
export function summarise(page: ParsedPage): string | null {
  const prose = page.blocks.filter((block) => block.split(' ').length >= 8 && /[.!?]["')”’]?$/.test(block) && !BOILERPLATE.test(block));
  const sentences = prose.flatMap(splitSentences);
  let summary = '';
  for (const sentence of sentences) {
    const next = summary ? `${summary} ${sentence}` : sentence;
    if (next.length > MAX_SUMMARY_CHARS) break;
    summary = next;
  }
  if (!summary && sentences[0]) summary = truncateWords(sentences[0], MAX_SUMMARY_CHARS);
  if (!summary && page.description) summary = truncateWords(page.description, MAX_SUMMARY_CHARS);
  return summary || null;
}

function truncateWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  return `${trimEnd(cut.slice(0, Math.max(cut.lastIndexOf(' '), 1)), ' ,;:.-')}…`;
}

// ---------------------------------------------------------------------------------------------------------------
// Which other pages to read

const LINK_KINDS: Array<{ kind: string; pattern: RegExp; weight: number }> = [
  { kind: 'about', pattern: /\b(about|about[- ]us|company|who[- ]we[- ]are|our[- ]story|mission|team)\b/i, weight: 4 },
  { kind: 'product', pattern: /\b(products?|platform|features?|solutions?|how[- ]it[- ]works|services|what[- ]we[- ]do)\b/i, weight: 3 },
  { kind: 'customers', pattern: /\b(customers?|clients|case[- ]studies|success[- ]stories)\b/i, weight: 2 },
  { kind: 'pricing', pattern: /\b(pricing|plans|prices)\b/i, weight: 2 },
];
const SKIPPED_PATHS =
  /\b(log[- ]?in|sign[- ]?in|sign[- ]?up|register|careers?|jobs|blog|news|press|legal|privacy|terms|cookies?|support|help|docs|status|contact|cart|checkout)\b/i;
const FILE_PATHS = /\.(pdf|png|jpe?g|gif|svg|webp|ico|zip|gz|mp4|mp3|xml|json|css|js|txt)$/i;

/** Up to `limit` same-origin pages that say what the company is, sells or charges, one of each kind. */
export function pickFollowUpLinks(page: ParsedPage, limit: number): string[] {
  const home = new URL(page.url);
  const homeKey = pageKey(home);
  const best = new Map<string, { url: string; kind: string; score: number; order: number }>();

  page.links.forEach((link, order) => {
    const target = new URL(link.url);
    if (target.origin !== home.origin || pageKey(target) === homeKey) return;
    const path = target.pathname.replace(/[/_]+/g, ' ');
    if (SKIPPED_PATHS.test(path) || FILE_PATHS.test(target.pathname)) return;
    let choice: { kind: string; score: number } | null = null;
    for (const { kind, pattern, weight } of LINK_KINDS) {
      const score = (pattern.test(path) ? weight : 0) + (pattern.test(link.text) ? weight / 2 : 0);
      if (score > 0 && (!choice || score > choice.score)) choice = { kind, score };
    }
    if (!choice) return;
    const depth = target.pathname.split('/').filter(Boolean).length;
    const score = choice.score - Math.max(0, depth - 1) * 0.5;
    const key = pageKey(target);
    const known = best.get(key);
    if (!known || score > known.score) best.set(key, { url: target.href, kind: choice.kind, score, order: known?.order ?? order });
  });

  const ranked = [...best.values()].sort((a, b) => b.score - a.score || a.order - b.order);
  const picked: string[] = [];
  const kinds = new Set<string>();
  for (const candidate of ranked) {
    if (picked.length >= limit) break;
    if (kinds.has(candidate.kind)) continue;
    kinds.add(candidate.kind);
    picked.push(candidate.url);
  }
  return picked;
}

function pageKey(url: URL): string {
  return `${url.origin}${trimEnd(url.pathname, '/')}${url.search}`;
}

/** `text` without `characters` at its end, by a loop: /[…]+$/ would rescan a run of them from each of its characters. */
function trimEnd(text: string, characters: string): string {
  let end = text.length;
  while (end > 0 && characters.includes(text.charAt(end - 1))) end -= 1;
  return text.slice(0, end);
}
