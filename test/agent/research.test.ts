import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { RunContext } from '../../src/agent/engine.ts';
import { assertStepOutput } from '../../src/agent/output-check.ts';
import { parsePage, pickFollowUpLinks } from '../../src/agent/page.ts';
import { research } from '../../src/agent/research.ts';
import { testCpu } from '../support/cpu.ts';

const NAV = `
  <header class="site-header">
    <a href="/" class="logo">Kestrel</a>
    <nav>
      <ul>
        <li><a href="/product">Product</a></li>
        <li><a href="/pricing">Pricing</a></li>
        <li><a href="/about-us">About us</a></li>
        <li><a href="/blog/route-planning-2024">Blog</a></li>
        <li><a href="/careers">Careers</a></li>
        <li><a href="https://app.kestrel.example/login">Log in</a></li>
      </ul>
    </nav>
  </header>`;

const FOOTER = `
  <footer>
    <p>Kestrel Logistics Ltd. Registered in England, company number 09876543.</p>
    <p>© 2024 Kestrel Logistics. All rights reserved. <a href="/privacy">Privacy</a> <a href="/terms">Terms</a></p>
    <p>Join 12,000 subscribers to our newsletter.</p>
  </footer>`;

const HOME = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Kestrel Logistics | Route planning for regional carriers</title>
  <meta name="description" content="Kestrel plans delivery routes for regional carriers and cuts empty miles.">
  <meta property="og:description" content="Route planning for regional carriers.">
  <style>.hero { color: #123; }</style>
  <script>window.analytics = { track: function () { console.log('Tracking 42 customers'); } };</script>
</head>
<body>
  ${NAV}
  <div id="cookie-banner">We use cookies to improve your experience. Accept all 3 cookies?</div>
  <main>
    <section class="hero">
      <h1>Plan every route before the first truck leaves</h1>
      <p>Kestrel is a route-planning platform for regional carriers. Dispatchers build tomorrow's plan in minutes instead of hours, and drivers get their stops on their phone.</p>
      <a href="/product" class="button">See the product</a>
    </section>
    <section>
      <h2>Trusted by carriers across Europe</h2>
      <p>More than 340 carriers in 11 countries plan their deliveries with Kestrel. Together they drive 2.1 million stops a month.</p>
      <ul>
        <li>Customers cut empty miles by 18% on average in their first quarter.</li>
        <li>Live in a week, with integrations for Samsara, Webfleet and SAP TM.</li>
        <li>Seamless, world-class and revolutionary.</li>
      </ul>
      <div class="stat"><span>24/7</span> <span>support</span></div>
    </section>
    <section>
      <h2>Why dispatchers like it</h2>
      <p>Nobody wants another tool. Kestrel fits the way your team already works.</p>
      <p>Want to see it? <a href="/contact">Contact sales</a></p>
    </section>
  </main>
  ${FOOTER}
</body>
</html>`;

const ABOUT = `<!doctype html>
<html><head><title>About us | Kestrel Logistics</title></head>
<body>
  ${NAV}
  <main>
    <article>
      <h1>About Kestrel</h1>
      <p>Kestrel was founded in 2016 in Leeds by two former dispatchers who were tired of planning routes in spreadsheets.</p>
      <p>Today the team of 85 people works from offices in Leeds, Rotterdam and Kraków.</p>
      <p>More than 340 carriers in 11 countries plan their deliveries with Kestrel.</p>
      <p>We raised a Series B of €30 million in 2023, led by Northzone.</p>
      <p>We believe in doing the right thing.</p>
    </article>
  </main>
  ${FOOTER}
</body></html>`;

const PRODUCT = `<!doctype html>
<html><head><title>Product | Kestrel Logistics</title></head>
<body>
  ${NAV}
  <main>
    <h1>The Kestrel platform</h1>
    <p>The planner builds routes for up to 5,000 stops in under two minutes.</p>
    <p>The driver app works offline and syncs proof of delivery when the signal returns.</p>
  </main>
  ${FOOTER}
</body></html>`;

const PRICING = `<!doctype html>
<html><head><title>Pricing | Kestrel Logistics</title></head>
<body>${NAV}<main><h1>Pricing</h1><p>Plans start at €39 per vehicle per month, billed annually.</p></main>${FOOTER}</body></html>`;

let server: Server;
let origin: string;

function serveSite(): Server {
  return createServer((req, res) => {
    const html = (body: string): void => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    switch (req.url) {
      case '/':
        return html(HOME);
      case '/about-us':
        return html(ABOUT);
      case '/product':
        return html(PRODUCT);
      case '/pricing':
        return html(PRICING);
      case '/broken/':
        return html(HOME.replaceAll('href="/about-us"', 'href="/about"'));
      case '/down/':
        res.writeHead(503, { 'content-type': 'text/html' });
        return res.end('<h1>Maintenance</h1>');
      default:
        res.writeHead(404, { 'content-type': 'text/html' });
        return res.end('<h1>Not found</h1>');
    }
  });
}

before(async () => {
  server = serveSite();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

function context(companyWebsite: string | null): RunContext {
  return {
    runId: '6a0c6c1e-5a3e-4b8e-9b57-2f1c1a7d9e10',
    lead: { id: 'lead-1', name: 'Ada Lovelace', email: 'ada@kestrel.example', companyName: 'Kestrel Logistics', companyWebsite },
    call: { id: 'call-1', title: 'Discovery', transcript: 'Ada: Hello.', occurredAt: null },
    senderName: 'Grace Hopper',
  };
}

describe('research', () => {
  it('reads the home page and two pages that say what the company is and sells', async () => {
    const output = await research(context(`${origin}/`), { cpu: testCpu(), allowPrivateHosts: true, engine: 'offline' });
    assertStepOutput('RESEARCH', output);

    assert.equal(output.engine, 'offline');
    assert.equal(output.website.fetched, true);
    assert.equal(output.website.status, 200);
    assert.equal(output.website.error, null);
    assert.equal(output.website.title, 'Kestrel Logistics | Route planning for regional carriers');
    assert.equal(output.website.description, 'Kestrel plans delivery routes for regional carriers and cuts empty miles.');
    assert.deepEqual(output.sources, [`${origin}/`, `${origin}/about-us`, `${origin}/product`]);

    const summary = output.website.summary ?? '';
    assert.ok(summary.startsWith('Kestrel is a route-planning platform for regional carriers.'), summary);
    assert.ok(summary.length <= 600);
    for (const chrome of ['Careers', 'cookies', 'All rights reserved', 'analytics', 'Tracking']) {
      assert.ok(!summary.includes(chrome), `summary holds page chrome "${chrome}": ${summary}`);
    }

    const texts = output.facts.map((fact) => fact.text);
    const sourceOf = (fragment: string): string | undefined => output.facts.find((fact) => fact.text.includes(fragment))?.source;
    assert.equal(sourceOf('More than 340 carriers in 11 countries'), `${origin}/`);
    assert.equal(sourceOf('cut empty miles by 18%'), `${origin}/`);
    assert.equal(sourceOf('founded in 2016 in Leeds'), `${origin}/about-us`);
    assert.equal(sourceOf('offices in Leeds, Rotterdam and Kraków'), `${origin}/about-us`);
    assert.equal(sourceOf('up to 5,000 stops'), `${origin}/product`);

    // The same sentence on two pages is one fact, from the first page it was read on.
    assert.equal(texts.filter((text) => text.includes('More than 340 carriers')).length, 1);
    // Chrome, scripts, fluff and vague sentences are not facts.
    for (const vague of ['cookies', '12,000 subscribers', 'All rights reserved', 'world-class', 'Tracking 42', 'doing the right thing', 'company number']) {
      assert.ok(!texts.some((text) => text.includes(vague)), `"${vague}" should not be a fact`);
    }
    assert.ok(output.facts.length <= 12);
    for (const text of texts) assert.equal(text, text.trim().replace(/\s+/g, ' '));
  });

  it('says so, without failing, when the lead has no website', async () => {
    const output = await research(context(null), { cpu: testCpu(), allowPrivateHosts: true, engine: 'model' });
    assertStepOutput('RESEARCH', output);
    assert.equal(output.engine, 'model');
    assert.equal(output.website.url, null);
    assert.equal(output.website.fetched, false);
    assert.match(output.website.error ?? '', /no company website/);
    assert.deepEqual(output.facts, []);
    assert.deepEqual(output.sources, []);
  });

  it('says so, without failing, when the site cannot be read', async () => {
    const output = await research(context(`${origin}/down/`), { cpu: testCpu(), allowPrivateHosts: true, engine: 'offline' });
    assertStepOutput('RESEARCH', output);
    assert.equal(output.website.fetched, false);
    assert.equal(output.website.status, 503);
    assert.match(output.website.error ?? '', /503/);
    assert.equal(output.website.summary, null);
    assert.deepEqual(output.facts, []);
    assert.deepEqual(output.sources, []);
  });

  it('refuses a private address when private hosts are not allowed', async () => {
    const output = await research(context(`${origin}/`), { cpu: testCpu(), allowPrivateHosts: false, engine: 'offline' });
    assertStepOutput('RESEARCH', output);
    assert.equal(output.website.fetched, false);
    assert.match(output.website.error ?? '', /loopback/);
    assert.deepEqual(output.sources, []);
  });

  it('lists only the pages it actually read when a follow-up page is missing', async () => {
    const output = await research(context(`${origin}/broken/`), { cpu: testCpu(), allowPrivateHosts: true, engine: 'offline' });
    assertStepOutput('RESEARCH', output);
    assert.equal(output.website.fetched, true);
    assert.deepEqual(output.sources, [`${origin}/broken/`, `${origin}/product`]);
  });

  it('uses an injected fetch, and passes the private-host setting and the run signal to it', async () => {
    const calls: Array<{ url: string; allowPrivateHosts: boolean; signal: AbortSignal | undefined }> = [];
    const controller = new AbortController();
    const output = await research(
      { ...context('https://kestrel.example'), signal: controller.signal },
      {
        cpu: testCpu(),
        allowPrivateHosts: false,
        engine: 'offline',
        fetchPage: async (url, options) => {
          calls.push({ url, allowPrivateHosts: options.allowPrivateHosts, signal: options.signal });
          return { ok: true, url, status: 200, html: url.endsWith('/pricing') ? PRICING : HOME.replace('href="/about-us"', '') };
        },
      },
    );
    assertStepOutput('RESEARCH', output);
    assert.deepEqual(
      calls.map((call) => call.url),
      ['https://kestrel.example', 'https://kestrel.example/product', 'https://kestrel.example/pricing'],
    );
    assert.ok(calls.every((call) => call.allowPrivateHosts === false && call.signal === controller.signal));
    assert.ok(output.facts.some((fact) => fact.text === 'Plans start at €39 per vehicle per month, billed annually.'));
  });

  it('caps facts at twelve', async () => {
    const many = Array.from({ length: 30 }, (_, i) => `<p>Kestrel opened depot number ${i + 1} in ${2000 + i} for 40 carriers.</p>`).join('');
    const page = (body: string): string => `<html><head><title>Many</title></head><body><main>${body}</main></body></html>`;
    const output = await research(context('https://many.example/'), {
      cpu: testCpu(),
      allowPrivateHosts: false,
      engine: 'offline',
      fetchPage: async (url) => ({ ok: true, url, status: 200, html: page(url.endsWith('/about') ? many.replaceAll('depot', 'office') : `${many}<a href="/about">About</a>`) }),
    });
    assertStepOutput('RESEARCH', output);
    assert.equal(output.facts.length, 12);
    assert.equal(new Set(output.facts.map((fact) => fact.text)).size, 12);
  });
});

describe('parsePage and pickFollowUpLinks', () => {
  it('keeps the main text and drops navigation, footer, scripts and styles', () => {
    const page = parsePage(HOME, 'https://kestrel.example/');
    assert.deepEqual(page.headings, ['Plan every route before the first truck leaves', 'Trusted by carriers across Europe', 'Why dispatchers like it']);
    const text = page.blocks.join('\n');
    assert.ok(text.includes('Dispatchers build tomorrow'));
    for (const chrome of ['Careers', 'Log in', 'newsletter', 'window.analytics', 'color: #123', 'cookies']) {
      assert.ok(!text.includes(chrome), `main text holds "${chrome}"`);
    }
  });

  it('falls back to the body without a main element, still without the chrome', () => {
    const page = parsePage(`<html><body>${NAV}<div><p>Kestrel serves 340 carriers.</p></div>${FOOTER}</body></html>`, 'https://kestrel.example/');
    assert.deepEqual(page.blocks, ['Kestrel serves 340 carriers.']);
    assert.equal(page.title, null);
  });

  it('picks same-origin about, product or pricing pages, never blog, careers, login or other sites', () => {
    const page = parsePage(
      `<html><body><a href="/blog/about-our-pricing">Blog</a><a href="https://other.example/about">About</a>
       <a href="/careers">About working here</a><a href="/pricing#plans">Pricing</a><a href="/company/about">Company</a>
       <a href="mailto:hi@kestrel.example">About</a><a href="/brochure.pdf">Product sheet</a><a href="/">Home</a></body></html>`,
      'https://kestrel.example/',
    );
    assert.deepEqual(pickFollowUpLinks(page, 2), ['https://kestrel.example/company/about', 'https://kestrel.example/pricing']);
  });
});
