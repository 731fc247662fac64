// Every page on a phone (390×844), and on a laptop (1280×800): nothing scrolls sideways, not even inside a card,
// and nothing of a page reaches past the right edge; on a phone, the
// page starts right under the top bar however short it is, the Runs rows keep their status, pipeline time and
// start, Revoke is in reach on the Keys page, and a long e-mail and website end in an ellipsis with the whole value
// in a title. The data is made long on purpose: a long name, e-mail, company, website and key name, and a file to
// import with long headers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { pipelineMs } from '../../web/src/lib/pipeline.ts';
import {
  ADMIN, browserUnavailable, parseDuration, SessionClient, showsDuration, TRANSCRIPT, waitFor, watchConsole, type Leadrun,
} from './support.ts';
import { openWebUi, type TestBrowser, type WebUi } from './browser.ts';

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 800 };
const LEAD = {
  name: 'Bartholomew Featherstonehaugh-Wellington',
  email: 'bartholomew.featherstonehaugh-wellington@northwind-logistics-international.co.uk',
  companyName: 'Northwind Logistics International Holdings',
  // A name that never resolves (RFC 2606), written fully qualified with its final dot.
  companyWebsite: 'https://www.northwind-logistics-and-freight-planning-international.invalid./about-us',
};
const KEY_NAME = 'Nightly synchronisation of the Northwind Logistics account with the CRM';

interface Fit {
  scrollWidth: number;
  offenders: string[];
  topbarBottom: number | null;
  mainTop: number;
}

/**
 * What sticks out on the right (or left) of the page: every element of the page's main content and top bar whose
 * box leaves the viewport's width. An element cut by a box that shows the cut (text-overflow: ellipsis) or that is
 * visually hidden (1×1 px) does not count when that box fits; one inside a sideways scroller does.
 */
async function measure(page: Page, viewWidth: number): Promise<Fit> {
  return page.evaluate((width) => {
    const doc = (globalThis as any).document;
    const view = globalThis as any;
    const fits = (box: { left: number; right: number }) => box.left >= -0.5 && box.right <= width + 0.5;
    const describe = (el: any) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`
      + `${el.textContent ? ` "${el.textContent.trim().slice(0, 40)}"` : ''}`;
    const cutInView = (el: any): boolean => {
      for (let a = el.parentElement; a && a !== doc.documentElement; a = a.parentElement) {
        const style = view.getComputedStyle(a);
        if (style.overflowX === 'auto' || style.overflowX === 'scroll') return false;
        const box = a.getBoundingClientRect();
        const showsCut = style.textOverflow === 'ellipsis' || (box.width <= 1 && box.height <= 1);
        if ((style.overflowX === 'hidden' || style.overflowX === 'clip') && showsCut) return fits(box);
      }
      return false;
    };
    const offenders: string[] = [];
    const roots = [doc.querySelector('main'), doc.querySelector('.topbar')].filter(Boolean);
    for (const root of roots) {
      for (const el of [root, ...root.querySelectorAll('*')]) {
        const box = el.getBoundingClientRect();
        // A box that scrolls sideways inside the page (a table in its card) hides what it cuts, however wide the
        // page: its content must fit it.
        const style = view.getComputedStyle(el);
        if ((style.overflowX === 'auto' || style.overflowX === 'scroll') && el.scrollWidth > el.clientWidth + 1) {
          offenders.push(`${describe(el)} scrolls sideways: ${el.scrollWidth} px in ${el.clientWidth}`);
        }
        if ((box.width === 0 && box.height === 0) || fits(box) || cutInView(el)) continue;
        offenders.push(`${describe(el)} spans ${Math.round(box.left)}..${Math.round(box.right)}`);
      }
    }
    const topbar = doc.querySelector('.topbar');
    const topbarVisible = topbar && view.getComputedStyle(topbar).display !== 'none';
    return {
      scrollWidth: doc.documentElement.scrollWidth,
      offenders: offenders.slice(0, 10),
      topbarBottom: topbarVisible ? topbar.getBoundingClientRect().bottom : null,
      mainTop: doc.querySelector('main').getBoundingClientRect().top,
    };
  }, viewWidth);
}

async function assertFits(page: Page, what: string, viewWidth = PHONE.width): Promise<void> {
  const fit = await measure(page, viewWidth);
  assert.ok(fit.scrollWidth <= viewWidth, `${what}: the page is ${fit.scrollWidth} px wide`);
  assert.deepEqual(fit.offenders, [], `${what}: nothing reaches past the right edge`);
  if (fit.topbarBottom !== null) assert.ok(Math.abs(fit.mainTop - fit.topbarBottom) < 1, `${what}: the page starts under the top bar (${fit.mainTop} vs ${fit.topbarBottom})`);
}

/**
 * The words of the element's text that are cut over two lines (a word-break inside a word, "Discove/ry"), found as
 * the words whose range takes more than one line box.
 */
async function brokenWords(locator: Locator): Promise<string[]> {
  return locator.evaluate((root: any) => {
    const doc = (globalThis as any).document;
    const broken: string[] = [];
    const walker = doc.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.textContent.matchAll(/\S+/g)) {
        const range = doc.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].filter((r: any) => r.width > 0).map((r: any) => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
    return broken;
  });
}

/** The element's box lies across the viewport's width, and (scrolled to) within its height. */
async function assertInView(locator: Locator, what: string): Promise<void> {
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  assert.ok(box, `${what} is shown`);
  assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `${what} spans ${box.x}..${box.x + box.width}`);
  assert.ok(box.y >= 0 && box.y + box.height <= PHONE.height, `${what} is within the screen's height`);
}

describe('the web UI on a phone (390×844)', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];
  let lead: any;
  let run: any;
  let pages: Array<[string, (p: Page) => Promise<unknown>]>;

  let ui: WebUi;
  before(async () => {
    ui = await openWebUi({ server: {}, context: { viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true }, signedIn: false });
    ({ server, page, consoleErrors, context, browser } = ui);
  });
  after(async () => {
    await ui?.close();
  });

  it('fits first-run setup', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { name: 'Set up your workspace' }).waitFor();
    await assertFits(page, 'setup');
  });

  it('fits every page of the app, with long names, e-mails and addresses in it', async () => {
    client = await SessionClient.setUp(context, server.url);
    await client.ok('POST', '/ui/api/members', { name: 'Jordan Lee-Castellanos', email: 'jordan.lee-castellanos.sales-operations@northwind-logistics-international.co.uk', role: 'MEMBER', password: 'a long member password' });
    lead = await client.ok('POST', '/api/v1/leads', LEAD);
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
    const started = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    run = await waitFor(async () => {
      const current = (await client.ok('GET', `/api/v1/runs/${started.id}`)).data;
      return current.status === 'AWAITING_APPROVAL' ? current : null;
    }, 'the run to await approval', 30_000);
    await client.ok('POST', '/ui/api/keys', { name: KEY_NAME, scopes: ['leads:read', 'leads:write', 'runs:read', 'runs:write'] });
    // A batch of its own lead, so that the pages below still show the one run of LEAD.
    const batchLead = await client.ok('POST', '/api/v1/leads', { name: 'Batch of one' });
    const batchCall = await client.ok('POST', `/api/v1/leads/${batchLead.id}/calls`, { title: 'Call', transcript: TRANSCRIPT });
    const batch = (await client.ok('POST', '/api/v1/runs/batch', { runs: [{ leadId: batchLead.id, callId: batchCall.id }] })).data[0];
    const members = (await client.ok('GET', '/ui/api/members')).data as Array<{ id: string; email: string | null }>;
    const jordan = members.find((m) => m.email?.startsWith('jordan'))!;
    const reset = await client.ok('POST', `/ui/api/members/${jordan.id}/password-reset`, {});
    const mailbox = 'jordan.lee-castellanos.sales-operations@northwind-logistics-international.co.uk';
    await client.ok('PUT', '/ui/api/settings/email', {
      fromName: 'Northwind Logistics International Sales Operations', fromAddress: mailbox, defaultDeliver: 'mailbox',
      smtp: { host: 'smtp-relay.outbound.northwind-logistics-international.co.uk.mailhost.test', port: 465, security: 'tls', user: mailbox, password: 'a password' },
      imap: { host: 'imap.northwind-logistics-international.co.uk.mailhost.test', port: 993, security: 'tls', user: mailbox, password: 'a password', draftsFolder: '[Gmail]/Entwürfe der Vertriebsabteilung Nordwest' },
    });
    await client.ok('PATCH', '/ui/api/profile', { senderName: 'Maya Brooks, Head of Sales Operations, Northwind', signature: `Maya Brooks\n${mailbox}\nhttps://www.northwind-logistics-international.co.uk/sales-operations/team` });

    pages = [
      ['/leads', (p) => p.getByRole('link', { name: LEAD.name }).waitFor()],
      [`/leads/${lead.id}`, (p) => p.getByRole('region', { name: 'Runs' }).getByText('Awaiting approval').waitFor()],
      ['/runs', (p) => p.getByRole('link', { name: LEAD.name }).waitFor()],
      // With the mailbox set up as the default, the page offers it first once it knows what the workspace can send.
      [`/runs/${run.id}`, (p) => p.getByRole('button', { name: 'Save to my mailbox' }).waitFor()],
      [`/runs/${run.id}/trace`, (p) => p.getByRole('region', { name: 'Events' }).getByText('Draft ready for review').waitFor()],
      ['/settings/keys', (p) => p.getByRole('rowheader', { name: KEY_NAME }).waitFor()],
      ['/settings/members', (p) => p.getByRole('rowheader', { name: /Jordan Lee-Castellanos/ }).waitFor()],
      ['/settings/audit', (p) => p.getByText('run.created', { exact: true }).waitFor()],
      ['/settings/usage', (p) => p.getByText('Runs this month', { exact: true }).waitFor()],
      [`/runs/batches/${batch.batchId}`, (p) => p.getByRole('heading', { name: /started together/ }).waitFor()],
      ['/runs/review', (p) => p.getByRole('heading', { name: 'Review drafts' }).waitFor()],
      ['/settings/profile', (p) => p.getByTestId('signature-preview').getByText(/sales-operations\/team/).waitFor()],
      ['/settings/email', (p) => p.getByRole('button', { name: /Change the saved IMAP password/ }).waitFor()],
    ];
    for (const [path, ready] of pages) {
      await page.goto(`${server.url}${path}`);
      await ready(page);
      await assertFits(page, path);
    }

    // The page a reset link opens, as the member sees it: signed out, on their own phone.
    const visitor = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true });
    try {
      const theirs = await visitor.newPage();
      await theirs.goto(reset.url);
      await theirs.getByRole('heading', { name: 'Set a new password' }).waitFor();
      await assertFits(theirs, '/reset-password');
    } finally {
      await visitor.close();
    }
  });

  it('fits the import page with a file\'s preview, its columns and its bad rows', async () => {
    await page.goto(`${server.url}/leads/import`);
    await page.getByRole('heading', { name: 'Import leads', level: 1 }).waitFor();
    await assertFits(page, '/leads/import');
    // Long headers and values, a cell over two lines, and a bad row whose values are shown.
    const csv = [
      'Full Name;E-mail;Company;Company Website Address;Notes from the first call with the customer',
      `${LEAD.name};${LEAD.email};${LEAD.companyName};${LEAD.companyWebsite};"Wants a demo; asked about\nthe annual plan"`,
      `Nobody;not-an-email;${LEAD.companyName};${LEAD.companyWebsite};`,
    ].join('\r\n');
    await page.locator('input[type="file"]').setInputFiles({ name: 'northwind-logistics-international-leads-export.csv', mimeType: 'text/csv', buffer: Buffer.from(`\uFEFF${csv}`) });
    await page.getByRole('table', { name: /The header and the first 2 rows/ }).waitFor();
    await assertFits(page, '/leads/import with a preview');
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.getByRole('table', { name: 'Rows with a problem' }).locator('dd', { hasText: 'not-an-email' }).waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await assertFits(page, '/leads/import with bad rows');
    await assertInView(page.getByRole('button', { name: 'Download bad rows' }), 'Download bad rows');
  });

  it('fits every page on a laptop (1280×800) too, without a table scrolling sideways or a word cut in two', async () => {
    // An e-mail address and a website with nowhere to wrap, an owner and a status: what widened the Leads table.
    const members = (await client.ok('GET', '/ui/api/members')).data as Array<{ id: string; email: string | null }>;
    const wideLead = await client.ok('POST', '/api/v1/leads', {
      name: 'Maximilian Oberhausen', email: 'maximilian.oberhausen@northwindlogisticsinternational.com', status: 'QUALIFIED',
      companyName: 'Northwind Logistics International Holdings', companyWebsite: 'https://www.northwindlogisticsinternationalholdings.com',
      assignedToUserId: members.find((m) => m.email?.startsWith('jordan'))!.id,
    });
    const laptop = await browser.newContext({ viewport: LAPTOP, deviceScaleFactor: 1 });
    try {
      const wide = await laptop.newPage();
      const errors = watchConsole(wide);
      await SessionClient.signIn(laptop, server.url, ADMIN.email, ADMIN.password);
      for (const [path, ready] of pages) {
        await wide.goto(`${server.url}${path}`);
        await ready(wide);
        if (path === '/leads') await wide.getByRole('link', { name: 'Maximilian Oberhausen' }).waitFor();
        await assertFits(wide, `${path} at 1280 px`, LAPTOP.width);
      }
      await wide.goto(`${server.url}/leads/import`);
      const csv = [
        'Full Name;E-mail;Company;Status;Company Website Address;Notes from the first call with the customer',
        `${LEAD.name};${LEAD.email};${LEAD.companyName};Discovery;${LEAD.companyWebsite};"Wants a demo; asked about\nthe annual plan"`,
      ].join('\r\n');
      await wide.locator('input[type="file"]').setInputFiles({ name: 'leads.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      const preview = wide.getByRole('table', { name: /The header and the first 1 row/ });
      await preview.waitFor();
      // A long address may break where it must; a word of a few letters never.
      const cut = (await brokenWords(preview)).filter((word) => word.length < 20);
      assert.deepEqual(cut, [], 'no short word of the preview is cut over two lines');
      await assertFits(wide, '/leads/import with a preview at 1280 px', LAPTOP.width);
      assert.deepEqual(errors, []);
    } finally {
      await laptop.close();
      // The phone's tests below measure a page of one lead.
      await client.ok('DELETE', `/api/v1/leads/${wideLead.id}`);
    }
  });

  it('fits the menu drawer and a dialog', async () => {
    await page.goto(`${server.url}/leads/${lead.id}`);
    await page.getByRole('button', { name: 'Open menu' }).click();
    const menu = page.getByRole('dialog', { name: 'Menu' });
    await menu.getByRole('link', { name: 'Runs' }).waitFor();
    await assertInView(menu.getByRole('button', { name: 'Sign out' }), 'the menu\'s Sign out');
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Add call' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a call' });
    await dialog.getByLabel('Transcript').waitFor();
    const box = await dialog.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width, `the dialog spans ${box?.x}..${box ? box.x + box.width : ''}`);
    await assertInView(dialog.getByRole('button', { name: 'Add call' }), 'the dialog\'s Add call');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('keeps each run\'s status, pipeline time and start on the Runs page', async () => {
    await page.goto(`${server.url}/runs`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: LEAD.name }) });
    await row.waitFor();
    const status = row.locator('[data-col="status"]');
    const took = row.locator('[data-col="took"]');
    const started = row.locator('[data-col="started"]');
    for (const [cell, what] of [[status, 'status'], [took, 'pipeline time'], [started, 'start']] as const) await assertInView(cell, what);
    assert.equal(await status.innerText(), 'Awaiting approval');
    assert.equal(await started.innerText(), 'just now');
    // The time the steps ran, as the run's steps say.
    const shown = parseDuration(await took.innerText());
    const steps = pipelineMs(run.steps);
    assert.ok(steps !== null && showsDuration(shown, steps), `"${await took.innerText()}" for ${steps} ms`);
    // Each cell says what it is: the column names are not on screen on a phone.
    assert.equal(await took.evaluate((el) => (globalThis as any).getComputedStyle(el, '::before').content), '"Pipeline time "');
    assert.equal(await started.evaluate((el) => (globalThis as any).getComputedStyle(el, '::before').content), '"Started "');
  });

  it('puts Revoke in reach on the Keys page, however long the key\'s name', async () => {
    await page.goto(`${server.url}/settings/keys`);
    const revoke = page.getByRole('button', { name: `Revoke ${KEY_NAME}` });
    await assertInView(revoke, 'Revoke');
    await revoke.click();
    const confirm = page.getByRole('dialog', { name: `Revoke “${KEY_NAME}”?` });
    await assertInView(confirm.getByRole('button', { name: 'Revoke key' }), 'the confirmation\'s Revoke key');
    await confirm.getByRole('button', { name: 'Keep key' }).click();
    await confirm.waitFor({ state: 'detached' });
  });

  it('ends a long e-mail and website with an ellipsis on the lead page, the whole value in a title', async () => {
    await page.goto(`${server.url}/leads/${lead.id}`);
    const facts = page.locator('.facts-strip');
    const email = facts.getByRole('link', { name: LEAD.email });
    const website = facts.getByRole('link', { name: /northwind-logistics-and-freight-planning-international\.invalid/ });
    assert.equal(await email.getAttribute('title'), LEAD.email);
    assert.equal(await website.getAttribute('title'), LEAD.companyWebsite);
    for (const [link, what] of [[email, 'e-mail'], [website, 'website']] as const) {
      await assertInView(link, what);
      const text = link.locator('.truncate');
      const cut = await text.evaluate((el: any) => ({
        textOverflow: (globalThis as any).getComputedStyle(el).textOverflow,
        whiteSpace: (globalThis as any).getComputedStyle(el).whiteSpace,
        cut: el.scrollWidth > el.clientWidth,
      }));
      assert.deepEqual(cut, { textOverflow: 'ellipsis', whiteSpace: 'nowrap', cut: true }, `the ${what} is cut with an ellipsis`);
    }
    // The host is shown as a person writes it: no "www.", no final dot.
    assert.equal(await website.locator('.truncate').innerText(), 'northwind-logistics-and-freight-planning-international.invalid');
  });

  it('fits the leads page with a selection, and the dialogs that act on leads', async () => {
    await page.goto(`${server.url}/leads`);
    await page.getByRole('checkbox', { name: `Select ${LEAD.name}` }).check();
    const bar = page.getByRole('region', { name: 'Selected leads' });
    await bar.getByText('1 lead selected').waitFor();
    await assertFits(page, '/leads with a lead selected');
    // The column names are not on screen on a phone; "Select all" is, beside its checkbox.
    await assertInView(page.getByRole('checkbox', { name: 'Select all leads on this page' }), 'Select all');
    assert.equal(await page.locator('.select-all-text').isVisible(), true);

    const dialogs: Array<[string, string, string]> = [['Assign to…', 'Assign 1 lead', 'Assign'], ['Start runs', 'Start 1 run', 'Start 1 run']];
    for (const [opener, title, action] of dialogs) {
      await bar.getByRole('button', { name: opener }).click();
      const dialog = page.getByRole('dialog', { name: title });
      await assertInView(dialog.getByRole('button', { name: action, exact: true }), `${title}: ${action}`);
      const box = await dialog.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width, `${title} spans ${box?.x}..${box ? box.x + box.width : ''}`);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
    }

    await page.goto(`${server.url}/leads/${lead.id}`);
    await page.getByRole('region', { name: 'Runs' }).getByText('Awaiting approval').waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByRole('dialog', { name: `Edit ${LEAD.name}` });
    await assertInView(edit.getByRole('button', { name: 'Save changes' }), 'the edit dialog\'s Save changes');
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await edit.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const erase = page.getByRole('dialog', { name: `Delete ${LEAD.name}?` });
    await assertInView(erase.getByRole('button', { name: 'Delete the lead, 1 call and 1 run' }), 'the erasure\'s Delete');
    await assertFits(page, 'the lead\'s erasure dialog');
    await erase.getByRole('button', { name: 'Keep the lead' }).click();
    await erase.waitFor({ state: 'detached' });
  });

  it('fits sign-in', async () => {
    const visitor = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true });
    try {
      const signIn = await visitor.newPage();
      await signIn.goto(`${server.url}/runs`);
      await signIn.getByRole('heading', { name: 'Sign in' }).waitFor();
      await assertFits(signIn, 'sign-in');
    } finally {
      await visitor.close();
    }
    assert.deepEqual(consoleErrors, []);
  });
});
