// A member's life in the web UI, from the admin's Members page: added, made an admin and a member again, given a
// one-time password link that they open in their own browser to set a password (signed in by it, then signing in
// with it), and removed, at which their open page is signed out on its next request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN, browserUnavailable, SessionClient, startLeadrun, watchConsole, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const JORDAN = { name: 'Jordan Lee', email: 'jordan@acme.test', firstPassword: 'a first password for Jordan', chosen: 'Jordan chose this one' };

describe('a member, from added to removed, in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;

  before(async () => {
    server = await startLeadrun();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('adds, promotes and demotes, resets the password by link, and removes: the member is signed out at once', async () => {
    const adminContext = await browser.newContext({ viewport: { width: 1360, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    await SessionClient.setUp(adminContext, server.url);
    const admin = await adminContext.newPage();
    const adminErrors = watchConsole(admin);

    // Add Jordan as a member.
    await admin.goto(`${server.url}/settings/members`);
    await admin.getByRole('button', { name: 'Add member' }).click();
    const addDialog = admin.getByRole('dialog', { name: 'Add a member' });
    await addDialog.getByLabel('Name').fill(JORDAN.name);
    await addDialog.getByLabel('E-mail').fill(JORDAN.email);
    await addDialog.getByLabel('Password').fill(JORDAN.firstPassword);
    await addDialog.getByRole('button', { name: 'Add member' }).click();
    const row = admin.getByRole('row', { name: new RegExp(JORDAN.name) });
    await row.getByText('Member', { exact: true }).waitFor();

    // Make them an admin, then a member again.
    await admin.getByRole('button', { name: `Make ${JORDAN.name} an admin` }).click();
    await admin.getByRole('dialog', { name: `Make ${JORDAN.name} an admin?` }).getByRole('button', { name: 'Make admin' }).click();
    await admin.getByText(`${JORDAN.name} is an admin now.`).waitFor();
    await row.getByText('Admin', { exact: true }).waitFor();
    await admin.getByRole('button', { name: `Make ${JORDAN.name} a member` }).click();
    await admin.getByRole('dialog', { name: `Make ${JORDAN.name} a member?` }).getByRole('button', { name: 'Make member' }).click();
    await row.getByText('Member', { exact: true }).waitFor();
    // The only admin is told, not allowed, when stepping down.
    await admin.getByRole('button', { name: `Make ${ADMIN.name} a member` }).click();
    const stepDown = admin.getByRole('dialog', { name: 'Make yourself a member?' });
    await stepDown.getByRole('button', { name: 'Make member' }).click();
    await stepDown.getByText(/only admin/).waitFor();
    await stepDown.getByRole('button', { name: 'Cancel' }).click();

    // A one-time link to set a new password, shown once, with a copy button.
    await admin.getByRole('button', { name: `Reset the password of ${JORDAN.name}` }).click();
    await admin.getByRole('dialog', { name: `Reset the password of ${JORDAN.name}?` }).getByRole('button', { name: 'Create link' }).click();
    const linkDialog = admin.getByRole('dialog', { name: `A password link for ${JORDAN.name}` });
    const link = await linkDialog.getByLabel('One-time link').inputValue();
    assert.match(link, new RegExp(`^${server.url}/reset-password#token=[A-Za-z0-9_-]{43}$`));
    await linkDialog.getByRole('button', { name: 'Copy' }).click();
    await linkDialog.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await admin.evaluate('navigator.clipboard.readText()'), link, 'the copy button copies the link');
    await linkDialog.getByRole('button', { name: 'Done' }).click();

    // Jordan opens it in their own browser: the token leaves the address bar, nothing is fetched from elsewhere,
    // and no request carries a Referer.
    const jordanContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const jordan = await jordanContext.newPage();
    const jordanErrors = watchConsole(jordan);
    const requests: Array<{ url: string; referer: string | undefined }> = [];
    jordan.on('request', (request) => requests.push({ url: request.url(), referer: request.headers().referer }));
    await jordan.goto(link);
    await jordan.getByRole('heading', { name: 'Set a new password' }).waitFor();
    await jordan.getByText(`For ${JORDAN.name} (${JORDAN.email}).`, { exact: false }).waitFor();
    assert.equal(jordan.url(), `${server.url}/reset-password`, 'the token is gone from the address');
    await jordan.getByLabel('New password', { exact: true }).fill(JORDAN.chosen);
    await jordan.getByLabel('New password again').fill(JORDAN.chosen);
    await jordan.getByRole('button', { name: 'Set password and sign in' }).click();
    await jordan.waitForURL(`${server.url}/leads`);
    await jordan.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).waitFor();
    assert.ok(requests.length > 0);
    for (const request of requests) {
      assert.ok(request.url.startsWith(`${server.url}/`), `only leadrun is asked: ${request.url}`);
      assert.ok(!request.referer, `no Referer on ${request.url}: ${request.referer}`);
    }

    // The link is used up; the first password is gone; the chosen one signs Jordan in.
    const again = await jordanContext.request.post(`${server.url}/ui/api/password-reset/check`, { data: { token: new URL(link).hash.slice(7) }, headers: { origin: server.url } });
    assert.equal(again.status(), 400);
    await jordan.getByRole('button', { name: 'Sign out' }).click();
    await jordan.getByRole('heading', { name: 'Sign in' }).waitFor();
    await jordan.getByLabel('E-mail').fill(JORDAN.email);
    await jordan.getByLabel('Password').fill(JORDAN.firstPassword);
    await jordan.getByRole('button', { name: 'Sign in' }).click();
    await jordan.getByRole('alert').getByText('That e-mail and password do not match an account here.').waitFor();
    await jordan.getByLabel('Password').fill(JORDAN.chosen);
    await jordan.getByRole('button', { name: 'Sign in' }).click();
    await jordan.waitForURL(`${server.url}/leads`);
    await jordan.getByRole('link', { name: 'Members' }).click();
    await jordan.getByRole('rowheader', { name: /Jordan Lee \(you\)/ }).waitFor();

    // The admin removes Jordan.
    await admin.getByRole('button', { name: `Remove ${JORDAN.name}` }).click();
    const removeDialog = admin.getByRole('dialog', { name: `Remove ${JORDAN.name}?` });
    await removeDialog.getByText('signed out everywhere at once').waitFor();
    await removeDialog.getByRole('button', { name: `Remove ${JORDAN.name}` }).click();
    await admin.getByText(`${JORDAN.name} was removed: signed out of 1 session.`).waitFor();
    assert.equal(await admin.getByRole('row', { name: new RegExp(JORDAN.name) }).count(), 0, 'no longer listed');

    // Jordan's open page: its next request is refused, and it asks to sign in; the password no longer works.
    await jordan.getByRole('link', { name: 'Runs' }).click();
    await jordan.getByRole('heading', { name: 'Sign in' }).waitFor();
    await jordan.getByText('Your session ended. Sign in again to continue.').waitFor();
    await jordan.getByLabel('E-mail').fill(JORDAN.email);
    await jordan.getByLabel('Password').fill(JORDAN.chosen);
    await jordan.getByRole('button', { name: 'Sign in' }).click();
    await jordan.getByRole('alert').getByText('That e-mail and password do not match an account here.').waitFor();

    // The audit log still names Jordan, marked as removed.
    await admin.getByRole('link', { name: 'Audit log' }).click();
    await admin.getByText(`${JORDAN.name} (removed)`).first().waitFor();

    assert.deepEqual(adminErrors, []);
    assert.deepEqual(jordanErrors, []);
    await jordanContext.close();
    await adminContext.close();
  });

  it('lets a person change their own name and password on Your profile, staying signed in there only', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const client = await SessionClient.signIn(context, server.url, ADMIN.email, ADMIN.password);
    const elsewhere = await browser.newContext();
    const other = await SessionClient.signIn(elsewhere, server.url, ADMIN.email, ADMIN.password);
    const page = await context.newPage();
    const errors = watchConsole(page);
    await page.goto(`${server.url}/settings/profile`);
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();

    await page.getByLabel('Name', { exact: true }).fill('Maya B. Brooks');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Your name was saved.').waitFor();
    await page.locator('.sidebar').getByText('Maya B. Brooks').waitFor();

    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill('a new password for Maya');
    await page.getByLabel('New password again').fill('a new password for Maya');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('That is not your current password.').waitFor();
    await page.getByLabel('Current password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password was changed. You were signed out everywhere else.').waitFor();

    // This page goes on working with its new session and CSRF token; the other browser is signed out.
    await page.getByLabel('Name', { exact: true }).fill('Maya Brooks');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.locator('.sidebar').getByText('Maya Brooks', { exact: true }).waitFor();
    assert.equal((await other.call('GET', '/ui/api/session')).status, 401);
    assert.equal((await client.call('GET', '/ui/api/session')).status, 200, 'the cookie this browser holds now is the new one');
    assert.deepEqual(errors, []);
    await elsewhere.close();
    await context.close();
  });
});
