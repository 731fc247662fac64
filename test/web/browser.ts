// One Chromium for all the browser test files of a test process. `npm test` runs several files in one process, and
// each starting a browser of its own cost about a second of CPU (the browser, its GPU process, the first renderer)
// before it did anything. A file takes a `TestBrowser`: its contexts are its own (cookies, storage and permissions
// are per context), and its `close` closes them, not the browser, which goes when the process's tests are done.
import { after } from 'node:test';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { launchChromium, SessionClient, startLeadrun, watchConsole, type Leadrun } from './support.ts';

/** What a test file does with the browser: contexts and pages of its own, all closed by `close`. */
export interface TestBrowser {
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** A page in a context of its own. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

let shared: Promise<Browser> | null = null;

// Registered as this module is first imported, at the top level of a test file: a hook of the process's root test,
// run once every file of the process is done.
after(async () => {
  const browser = await shared?.catch(() => null);
  await browser?.close();
});

function chromium(): Promise<Browser> {
  const current = shared;
  shared = (async () => {
    const browser = await current?.catch(() => null);
    // A browser that crashed or was closed is replaced, so that one file's accident stays its own.
    return browser?.isConnected() ? browser : launchChromium();
  })();
  return shared;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium();
  const contexts = new Set<BrowserContext>();
  const newContext = async (options?: BrowserContextOptions) => {
    // Without motion unless a test asks for it: the UI's spinners and pulsing dots then stand still (its stylesheet
    // honours prefers-reduced-motion), and a page no longer costs Chromium a frame each time they move.
    const context = await browser.newContext({ reducedMotion: 'reduce', ...options });
    contexts.add(context);
    context.once('close', () => contexts.delete(context));
    return context;
  };
  return {
    newContext,
    async newPage(options) {
      return (await newContext(options)).newPage();
    },
    async close() {
      await Promise.all([...contexts].map((context) => context.close()));
    },
  };
}

/** What `openWebUi` opens for a test file: a leadrun, a browser with a page in a context, and an admin signed in. */
export interface WebUi {
  server: Leadrun;
  browser: TestBrowser;
  context: BrowserContext;
  page: Page;
  /** Every console error of `page` (a test asserts it stays empty). */
  consoleErrors: string[];
  /** The admin of the workspace set up through the API (`signedIn`), with the context's cookies; null otherwise. */
  client: SessionClient | null;
  /** Closes the browser's contexts and stops the server. */
  close(): Promise<void>;
}

/**
 * The set-up of a browser test file: `leadrun serve` (its environment and options), the browser, a context (its
 * options; 1280×900 unless given), a page whose console is watched, and, unless `signedIn: false`, the workspace set up
 * through the API with the context signed in as its admin.
 */
export async function openWebUi({ env = {}, server: serverOptions = { storage: 'postgres' }, context: contextOptions = {}, signedIn = true }: {
  env?: Record<string, string>;
  server?: Parameters<typeof startLeadrun>[1];
  context?: BrowserContextOptions;
  signedIn?: boolean;
} = {}): Promise<WebUi> {
  const server = await startLeadrun(env, serverOptions);
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
  const client = signedIn ? await SessionClient.setUp(context, server.url) : null;
  const page = await context.newPage();
  return {
    server, browser, context, page, client, consoleErrors: watchConsole(page),
    async close() {
      await browser.close();
      await server.stop();
    },
  };
}
