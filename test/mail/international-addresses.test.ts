// Internationalised addresses (issue 45, item 3) on a real SMTP server on loopback: a Unicode domain goes into the
// envelope in its IDNA form, a Unicode local part with SMTPUTF8 where the server offers it, and where it does not,
// the message is not sent and the failure says why.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PermanentError } from '../../src/jobs/errors.ts';
import { envelopeAddress, sendRaw } from '../../src/mail/smtp.ts';
import { emailProblem, isEmail } from '../../src/domain/validation.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const RAW = Buffer.from('From: rep@seller.example\r\nTo: someone\r\nSubject: Hello\r\n\r\nHello.\r\n');
const servers: TestSmtpServer[] = [];
const server = async (smtpUtf8: boolean) => {
  const started = await startSmtpServer({ smtpUtf8 });
  servers.push(started);
  return started;
};
const send = (to: string, s: TestSmtpServer) => sendRaw(
  { host: s.host, port: s.port, security: 'none', user: null, password: null },
  { from: 'rep@seller.example', to: [to] }, RAW, { allowPrivateHosts: true },
);

describe('internationalised e-mail addresses', () => {
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('accepts Unicode domains and local parts, and says what is wrong with an address that is not one', () => {
    for (const address of ['info@müller.de', 'info@xn--mller-kva.de', 'ömer.nováková0@example.com', '山田@例え.jp']) {
      assert.equal(emailProblem(address), null, address);
    }
    const problems: Array<[string, RegExp]> = [
      ['ada.example.com', /no @$/], ['a@b', /the domain has no dot$/], ['a@@b.example', /more than one @/],
      ['@b.example', /nothing before the @/], ['a@', /nothing after the @/], ['a b@c.example', /space/],
      ['a..b@c.example', /two dots in a row/], ['a@b..example', /two in a row/], ['a@-b.example', /inner hyphens/],
    ];
    for (const [address, why] of problems) {
      assert.match(emailProblem(address) ?? '', /^must be an e-mail address: /, address);
      assert.match(emailProblem(address) ?? '', why, address);
      assert.equal(isEmail(address), false);
    }
  });

  it('sends to a Unicode domain in its IDNA form, without SMTPUTF8', async () => {
    assert.equal(envelopeAddress('info@müller.de'), 'info@xn--mller-kva.de');
    const s = await server(false);
    await send('info@müller.de', s);
    const [mail] = await s.waitFor(1);
    assert.ok(s.commands.includes('RCPT TO:<info@xn--mller-kva.de>'), s.commands.join('\n'));
    assert.equal(mail!.smtpUtf8, false);
  });

  it('sends a Unicode local part with SMTPUTF8 to a server that offers it', async () => {
    const s = await server(true);
    await send('ömer.nováková0@example.com', s);
    const [mail] = await s.waitFor(1);
    assert.deepEqual(mail!.envelope.to, ['ömer.nováková0@example.com']);
    assert.equal(mail!.smtpUtf8, true);
  });

  it('does not send a Unicode local part to a server without SMTPUTF8, and says so', async () => {
    const s = await server(false);
    await assert.rejects(send('ömer@example.com', s), (error: unknown) => {
      assert.ok(error instanceof PermanentError);
      assert.equal(error.permanent, true);
      const expected = /^ömer@example\.com has characters beyond ASCII before the @, which need the SMTPUTF8 extension/;
      assert.match(error.message, expected);
      return true;
    });
    assert.equal(s.attempts, 0, 'nothing was sent');
  });
});
