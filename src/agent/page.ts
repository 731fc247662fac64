// What RESEARCH reads from one HTML page of a company's website: its title, description and main text, the
// concrete statements in it (facts), a short summary, and the links to the pages worth reading next. Pure CPU
// work over a stranger's HTML: it runs in the CPU pool's threads (src/cpu), never on the event loop that answers
// HTTP, and every parser and pattern here is linear in the size of the page (DESIGN §10).
import * as cheerio from 'cheerio';
import type { AnyNode } from 'domhandler';
import type { Fact } from './outputs.ts';

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
// Parsing

const REMOVED = 'script, style, noscript, template, svg, iframe, canvas, object, embed, form, button, select, dialog';
const CHROME =
  'nav, footer, aside, [role="navigation"], [role="contentinfo"], [role="banner"], [role="complementary"], ' +
  '[aria-hidden="true"], [hidden], [id*="cookie" i], [class*="cookie" i], [class*="consent" i]';
const BLOCK_TAGS = new Set([
  'address', 'article', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'h1', 'h2', 'h3',
  'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul',
]);

export function parsePage(html: string, url: string): ParsedPage {
  const $ = cheerio.load(html);
  const meta = (selector: string): string | null => clean($(selector).first().attr('content') ?? '') || null;

  const title = clean($('head > title').first().text()) || meta('meta[property="og:title"]') || clean($('h1').first().text()) || null;
  const description =
    meta('meta[name="description" i]') ?? meta('meta[property="og:description"]') ?? meta('meta[name="twitter:description" i]');

  // Links are taken before the chrome goes: the about and pricing links usually live in the nav and footer.
  const links: ParsedPage['links'] = [];
  $('a[href]').each((_, element) => {
    const href = $(element).attr('href') ?? '';
    try {
      const target = new URL(href, url);
      target.hash = '';
      links.push({ url: target.href, text: clean($(element).text()) });
    } catch {
      // Not a URL: ignore the link.
    }
  });

  $(REMOVED).remove();
  // A page of article cards has no one article to prefer; then the whole body is read.
  let main = $('main, [role="main"]').first();
  if (main.length === 0 && $('article').length === 1) main = $('article');
  const container = main.length > 0 ? main : $('body');
  container.find(CHROME).remove();
  // Without a <main>, the page's own header (logo, menu) is chrome too; a header inside <main> is content.
  if (main.length === 0) container.find('body > header, header:has(nav), header:has(ul)').remove();

  const headings = container.find('h1, h2, h3').toArray().map((h) => clean($(h).text())).filter(Boolean);
  const parts: string[] = [];
  for (const node of container.toArray()) collectText(node, parts);
  const blocks = parts
    .join('')
    .split('\n')
    .map(clean)
    .filter((block) => block.length > 0);

  return { url, title, description, headings, blocks, links };
}

function collectText(node: AnyNode, parts: string[]): void {
  if (node.type === 'text') {
    parts.push((node as { data: string }).data);
    return;
  }
  if (!('children' in node) || !('name' in node)) return;
  const block = BLOCK_TAGS.has(node.name);
  if (block) parts.push('\n');
  for (const child of node.children) collectText(child, parts);
  if (block) parts.push('\n');
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

const ABBREVIATIONS = /\b(inc|ltd|llc|co|corp|dr|mr|mrs|ms|st|no|vs|etc|e\.g|i\.e|approx|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.$/i;

export function splitSentences(text: string): string[] {
  const pieces = text.split(/(?<=[.!?]["')\]”’]?)\s+(?=["'(“‘]?[A-Z0-9])/);
  const sentences: string[] = [];
  for (const piece of pieces) {
    const previous = sentences.at(-1);
    // "Acme Inc. serves…" and "U.S. teams" are one sentence, not two.
    if (previous !== undefined && (ABBREVIATIONS.test(previous) || /\b[A-Z]\.$/.test(previous))) {
      sentences[sentences.length - 1] = `${previous} ${piece}`;
    } else {
      sentences.push(piece);
    }
  }
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
  const words = sentence.split(' ').length;
  const hasDigit = /\d/.test(sentence);
  if (sentence.length < 15 || sentence.length > MAX_FACT_CHARS) return 0;
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

/** The company's name as a page would write it: "Kestrel Logistics Ltd" also matches "Kestrel". */
function nameVariants(companyName: string | null): string[] {
  if (!companyName) return [];
  const full = companyName.trim().toLowerCase();
  const bare = full.replace(/[,.]?\s+(inc|ltd|llc|gmbh|ag|sa|sas|bv|plc|limited|corp|corporation|co)\.?$/i, '');
  const first = bare.split(/\s+/)[0] ?? '';
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

export function factKey(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
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
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 1)).replace(/[\s,;:.-]+$/, '')}…`;
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
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}${url.search}`;
}
