// RESEARCH: reads the lead's company website (home page and up to two pages that say what the company is or
// sells) and keeps concrete statements from it, each with the page it came from. The same for every engine.
// A site that cannot be read never fails the step, however it fails: the output says why and has no facts.
// Fetching happens here; reading a page (src/agent/page.ts) is CPU work over a stranger's HTML and runs in the
// CPU pool, with its time budget.
import { CpuBudgetExceeded, type CpuPool } from '../cpu/pool.ts';
import type { EngineName, RunContext } from './engine.ts';
import type { Fact, ResearchOutput } from '../schemas/outputs.ts';
import type { PageReading } from './page.ts';
import { factKey } from './text.ts';
import { fetchPage as guardedFetchPage, type FetchPageOptions } from './website.ts';

export interface ResearchOptions {
  cpu: CpuPool;
  fetchPage?: typeof guardedFetchPage;
  allowPrivateHosts: boolean;
  engine: EngineName;
}

const MAX_FACTS = 12;
const MAX_FOLLOW_UPS = 2;

export async function research(ctx: RunContext, options: ResearchOptions): Promise<ResearchOutput> {
  const fetchPage = options.fetchPage ?? guardedFetchPage;
  const website = ctx.lead.companyWebsite?.trim() || null;
  if (!website) {
    return unread(options.engine, null, null, 'The lead has no company website, so no website was researched.');
  }

  const fetchOptions: FetchPageOptions = { allowPrivateHosts: options.allowPrivateHosts };
  if (ctx.signal) fetchOptions.signal = ctx.signal;
  const companyName = ctx.lead.companyName;
  const read = (html: string, url: string, followUps: number): Promise<PageReading> =>
    options.cpu.run('readPage', { html, url, companyName, followUps }, { signal: ctx.signal });

  const home = await fetchPage(withScheme(website), fetchOptions);
  if (!home.ok) return unread(options.engine, website, home.status, home.error);

  let homePage: PageReading;
  try {
    homePage = await read(home.html, home.url, MAX_FOLLOW_UPS);
  } catch (error) {
    if (!(error instanceof CpuBudgetExceeded)) throw error;
    return unread(options.engine, website, home.status, `The page at ${home.url} could not be read: ${error.message}.`);
  }
  const facts = new FactList();
  facts.addAll(homePage.facts);
  const sources = [home.url];

  // Pages of the same site are fetched side by side, so the step takes at most two fetch deadlines.
  const pages = await Promise.all(homePage.followUps.map((url) => fetchPage(url, fetchOptions)));
  for (const page of pages) {
    if (!page.ok || !sameOrigin(page.url, home.url) || sources.includes(page.url)) continue;
    try {
      facts.addAll((await read(page.html, page.url, 0)).facts);
    } catch (error) {
      // A follow-up page that cannot be read in its budget adds nothing; the home page's facts stand.
      if (!(error instanceof CpuBudgetExceeded)) throw error;
      continue;
    }
    sources.push(page.url);
  }

  return {
    engine: options.engine,
    website: {
      url: website,
      fetched: true,
      status: home.status,
      error: null,
      title: homePage.title,
      description: homePage.description,
      summary: homePage.summary,
    },
    facts: facts.take(MAX_FACTS),
    sources,
  };
}

function unread(engine: ResearchOptions['engine'], url: string | null, status: number | null, error: string): ResearchOutput {
  return {
    engine,
    website: { url, fetched: false, status, error, title: null, description: null, summary: null },
    facts: [],
    sources: [],
  };
}

/** A bare "acme.com" is read as https; anything with a scheme is left to the fetch guard. */
function withScheme(website: string): string {
  return /^[a-z][a-z0-9+.-]*:(?!\d)/i.test(website) ? website : `https://${website}`;
}

function sameOrigin(a: string, b: string): boolean {
  return new URL(a).origin === new URL(b).origin;
}

/** The facts of every page read, without repeats, in the order found. */
class FactList {
  private readonly facts: Fact[] = [];
  private readonly keys = new Set<string>();

  addAll(facts: Fact[]): void {
    for (const fact of facts) {
      const key = factKey(fact.text);
      if (this.keys.has(key)) continue;
      this.keys.add(key);
      this.facts.push(fact);
    }
  }

  take(limit: number): Fact[] {
    return this.facts.slice(0, limit);
  }
}
