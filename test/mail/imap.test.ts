// The sender's mailbox over IMAP against a private Dovecot (test/support/dovecot.ts): the connection check's answers
// (signed in, wrong password, a private address refused, nothing listening, no Drafts folder), a draft saved to
// Drafts with \Draft and its headers, exactly once for a Message-ID however often it is saved, and TLS both ways
// (STARTTLS and TLS from the first byte) with the server's self-signed certificate trusted through `ca`, the seam
// tests use, and refused without it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { appendDraft, verifyImap } from '../../src/mail/imap.ts';
import type { ImapSettings } from '../../src/domain/mail-settings/settings.ts';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';

function rawDraft(messageId: string, subject = 'A pilot outline for Acme'): Buffer {
  return Buffer.from([
    'From: Rep Example <rep@example.com>',
    'To: Daniel Ng <daniel@acme.example>',
    `Subject: ${subject}`,
    `Message-ID: <${messageId}>`,
    'Date: Wed, 25 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hi Daniel,',
    '',
    'the pilot outline and two references, as promised.',
    '',
  ].join('\r\n'));
}

describe('IMAP against a private Dovecot', () => {
  let dovecot: Dovecot;
  let settings: ImapSettings;
  const allow = { allowPrivateHosts: true };

  before(async () => {
    dovecot = await startDovecot();
    settings = { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password, draftsFolder: 'Drafts' };
  });
  after(async () => {
    await dovecot?.stop();
  });

  it('checks the connection: signed in and the Drafts folder found', async () => {
    assert.deepEqual(await verifyImap(settings, allow), { ok: true });
  });

  it('says when the server refuses the user name or password', async () => {
    const answer = await verifyImap({ ...settings, password: 'wrong' }, allow);
    assert.deepEqual(answer, { ok: false, error: 'The server refused the user name or password.' });
    assert.doesNotMatch(JSON.stringify(answer), /correct horse/);
  });

  it('refuses a private address unless private hosts are allowed, without connecting', async () => {
    const answer = await verifyImap(settings, { allowPrivateHosts: false });
    assert.equal(answer.ok, false);
    assert.match((answer as { error: string }).error, /Refused to connect to 127\.0\.0\.1: it is a loopback address/);
  });

  it('says when nothing listens on the port', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    server.close();
    await once(server, 'close');
    const answer = await verifyImap({ ...settings, port }, allow);
    assert.deepEqual(answer, { ok: false, error: `Nothing answered at 127.0.0.1:${port}: the connection was refused.` });
  });

  it('says when a name does not resolve', async () => {
    const answer = await verifyImap({ ...settings, host: 'imap.does-not-exist.invalid' }, allow);
    assert.deepEqual(answer, { ok: false, error: 'Could not resolve imap.does-not-exist.invalid.' });
  });

  it('finds the Drafts folder by its \\Drafts mark when the configured name is missing', async () => {
    assert.deepEqual(await verifyImap({ ...settings, draftsFolder: 'Entwürfe' }, allow), { ok: true });
  });

  it('saves a draft in Drafts with \\Draft and its headers, once per Message-ID', async () => {
    const messageId = `draft-${Date.now()}@leadrun.test`;
    const first = await appendDraft(settings, rawDraft(messageId), messageId, allow);
    assert.match(first.response, /^saved in Drafts/);
    const again = await appendDraft(settings, rawDraft(messageId), `<${messageId}>`, allow);
    assert.match(again.response, /^already in Drafts/);
    const drafts = (await dovecot.messages('Drafts')).filter((m) => m.raw.includes(messageId));
    assert.equal(drafts.length, 1);
    assert.ok(drafts[0]!.flags.includes('\\Draft'), drafts[0]!.flags.join(' '));
    assert.match(drafts[0]!.raw, /^Subject: A pilot outline for Acme$/m);
    assert.match(drafts[0]!.raw, /^To: Daniel Ng <daniel@acme\.example>$/m);
    assert.equal((await dovecot.messages('INBOX')).filter((m) => m.raw.includes(messageId)).length, 0);
  });

  it('saves two different messages as two drafts, into the \\Drafts folder when the configured one is missing', async () => {
    const a = `a-${Date.now()}@leadrun.test`;
    const b = `b-${Date.now()}@leadrun.test`;
    await appendDraft({ ...settings, draftsFolder: 'Brouillons' }, rawDraft(a), a, allow);
    await appendDraft(settings, rawDraft(b), b, allow);
    const drafts = await dovecot.messages('Drafts');
    assert.equal(drafts.filter((m) => m.raw.includes(a)).length, 1);
    assert.equal(drafts.filter((m) => m.raw.includes(b)).length, 1);
  });

  it('refuses to save to a private address without allowPrivateHosts', async () => {
    await assert.rejects(appendDraft(settings, rawDraft('x@y'), 'x@y', { allowPrivateHosts: false }), /Refused to connect to 127\.0\.0\.1/);
  });

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('runner stopping'));
    await assert.rejects(appendDraft(settings, rawDraft('x@y'), 'x@y', { ...allow, signal: controller.signal }), /runner stopping/);
  });

  it('speaks STARTTLS with the self-signed certificate when told to trust it, and refuses it otherwise', async () => {
    const starttls: ImapSettings = { ...settings, security: 'starttls' };
    assert.deepEqual(await verifyImap(starttls, { ...allow, ca: dovecot.certificate }), { ok: true });
    const untrusted = await verifyImap(starttls, allow);
    assert.deepEqual(untrusted, {
      ok: false,
      error: `The TLS connection to 127.0.0.1:${dovecot.port} failed: its certificate is not signed by an authority this installation trusts.`,
    });
  });

  it('speaks TLS from the first byte on the IMAPS port, and says when the port does not speak TLS', async () => {
    const tls: ImapSettings = { ...settings, security: 'tls', port: dovecot.tlsPort };
    const messageId = `tls-${Date.now()}@leadrun.test`;
    const saved = await appendDraft(tls, rawDraft(messageId), messageId, { ...allow, ca: dovecot.certificate });
    assert.match(saved.response, /^saved in Drafts/);
    const wrongPort = await verifyImap({ ...tls, port: dovecot.port }, { ...allow, ca: dovecot.certificate });
    assert.equal(wrongPort.ok, false);
    assert.match((wrongPort as { error: string }).error, /TLS|did not answer|greeted/);
  });

  it('says when the mailbox has no Drafts folder, and saves nothing', async () => {
    const bare = await startDovecot({ drafts: false });
    try {
      const plain: ImapSettings = { ...settings, port: bare.port, user: bare.user, password: bare.password };
      assert.deepEqual(await verifyImap(plain, allow), {
        ok: false, error: 'Signed in, but there is no folder "Drafts" and none marked as the Drafts folder.',
      });
      await assert.rejects(appendDraft(plain, rawDraft('none@x'), 'none@x', allow), /There is no folder "Drafts" and none marked as the Drafts folder\./);
      assert.deepEqual(await bare.messages('INBOX'), []);
    } finally {
      await bare.stop();
    }
  });
});
