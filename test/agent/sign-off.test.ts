// The one sign-off every e-mail ends with (src/agent/sign-off.ts, DESIGN §12): a closing, the sender's name once, and
// `-- ` with the signature exactly when one is set; a model's own sign-off replaced by it; a delivery's body signed
// the same way.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signedBody, signOff, withSignOff } from '../../src/agent/sign-off.ts';
import { messageText } from '../../src/mail/message.ts';

/** How often a line equal to `line` occurs in `text`. */
const linesEqual = (text: string, line: string) => text.split('\n').filter((l) => l === line).length;

describe('signOff', () => {
  it('a closing and the name when there is no signature; no separator', () => {
    assert.equal(signOff({ name: 'Grace Hopper', signature: null }), 'Best regards,\nGrace Hopper');
    assert.equal(signOff({ name: '  Grace   Hopper ', signature: '   ' }), 'Best regards,\nGrace Hopper');
  });

  it('a closing, the name once, then "-- " and the signature verbatim', () => {
    const text = signOff({ name: 'Grace Hopper', signature: 'Head of Sales, Analytical Engines\n+44 20 7946 0000' });
    assert.equal(text, 'Best regards,\nGrace Hopper\n-- \nHead of Sales, Analytical Engines\n+44 20 7946 0000');
    assert.equal(linesEqual(text, '-- '), 1);
  });

  it('a signature that opens with the name: the name is not repeated above the separator', () => {
    const text = signOff({ name: 'Grace Hopper', signature: 'Grace Hopper\nHead of Sales' });
    assert.equal(text, 'Best regards,\n-- \nGrace Hopper\nHead of Sales');
    assert.equal(text.match(/Grace Hopper/g)!.length, 1);
    // "Grace Hopper, Head of Sales" on one line, and a sender name that is a short form of the signature's.
    assert.equal(signOff({ name: 'Grace Hopper', signature: 'Grace Hopper, Head of Sales' }), 'Best regards,\n-- \nGrace Hopper, Head of Sales');
    assert.equal(signOff({ name: 'Jonas B.', signature: 'Jonas Berg\nAccount Executive' }), 'Best regards,\n-- \nJonas Berg\nAccount Executive');
    // A first name that only begins another word is not the name.
    assert.equal(signOff({ name: 'Ann Lee', signature: 'Annual plans from £9\nAnn' }), 'Best regards,\nAnn Lee\n-- \nAnnual plans from £9\nAnn');
  });

  it('no sender name: the closing, then the signature under its separator, or the closing alone', () => {
    assert.equal(signOff({ name: null, signature: 'The Analytical Engines team' }), 'Best regards,\n-- \nThe Analytical Engines team');
    assert.equal(signOff({ name: null, signature: null }), 'Best regards,');
    assert.equal(signOff({ name: '', signature: '' }), 'Best regards,');
  });

  it('takes the closing the writer chose; a blank one is the default', () => {
    assert.equal(signOff({ name: 'Grace Hopper', signature: null }, { closing: 'Kind regards,' }), 'Kind regards,\nGrace Hopper');
    assert.equal(signOff({ name: 'Grace Hopper', signature: 'VP Sales' }, { closing: 'Cheers,' }), 'Cheers,\nGrace Hopper\n-- \nVP Sales');
    assert.equal(signOff({ name: 'Grace Hopper', signature: null }, { closing: '  ' }), 'Best regards,\nGrace Hopper');
  });

  it('keeps a signature as written, but with \\n line breaks and no blank lines around it', () => {
    assert.equal(signOff({ name: 'Grace', signature: '\r\nVP Sales\r\n\r\nAcme  \r\n\r\n' }), 'Best regards,\nGrace\n-- \nVP Sales\n\nAcme');
  });
});

describe('withSignOff: a writer that signed the e-mail itself', () => {
  const sender = { name: 'Grace Hopper', signature: 'Grace Hopper\nHead of Sales' };
  it('replaces a closing with the name and the signature, keeping the closing word', () => {
    const body = 'Hi Ada,\n\nThanks for the call.\n\nKind regards,\nGrace Hopper\nHead of Sales';
    assert.equal(withSignOff(body, sender), 'Hi Ada,\n\nThanks for the call.\n\nKind regards,\n-- \nGrace Hopper\nHead of Sales');
  });
  it('replaces a signature block, a closing on the last line of a paragraph, and "Best, Grace"', () => {
    assert.equal(withSignOff('Hi Ada,\n\nThanks.\n\nBest regards,\nGrace\n-- \nGrace Hopper', sender),
      'Hi Ada,\n\nThanks.\n\nBest regards,\n-- \nGrace Hopper\nHead of Sales');
    assert.equal(withSignOff('Hi Ada,\n\nSee you Friday.\nCheers!', { name: 'Grace', signature: null }), 'Hi Ada,\n\nSee you Friday.\n\nCheers!\nGrace');
    assert.equal(withSignOff('Hi Ada,\n\nSee you Friday.\n\nBest, Grace', { name: 'Grace', signature: null }), 'Hi Ada,\n\nSee you Friday.\n\nBest,\nGrace');
  });
  it('adds the sign-off to a body without one, and keeps a sentence that merely starts with "Thanks"', () => {
    assert.equal(withSignOff('Hi Ada,\n\nThanks, Ada, for your time today.', { name: 'Grace', signature: null }),
      'Hi Ada,\n\nThanks, Ada, for your time today.\n\nBest regards,\nGrace');
  });
});

describe('signedBody and messageText: the body a delivery sends', () => {
  it('sends a draft signed by signOff as it is', () => {
    const sender = { name: 'Grace Hopper', signature: 'Grace Hopper\nHead of Sales' };
    const body = `Hi Ada,\n\nThanks.\n\n${signOff(sender)}`;
    assert.equal(signedBody(body, sender), body);
    assert.equal(messageText(body, sender.signature, sender.name), `${body}\n`);
  });
  it('a draft signed with the name alone: the signature replaces the name rather than repeating it', () => {
    const body = 'Hi Ada,\n\nThanks.\n\nBest regards,\nGrace Hopper';
    const sent = messageText(body, 'Grace Hopper\nHead of Sales', 'Grace Hopper');
    assert.equal(sent, 'Hi Ada,\n\nThanks.\n\nBest regards,\n-- \nGrace Hopper\nHead of Sales\n');
    assert.equal(sent.match(/Grace Hopper/g)!.length, 1);
  });
  it('a person\'s own ending is kept, the signature added under "-- "; no signature, nothing added', () => {
    const body = 'Hi Ada,\n\nThanks.\n\nTalk Friday,\nG.\nP.S. The report is attached.';
    assert.equal(signedBody(body, { name: 'Grace', signature: 'VP Sales' }), `${body}\n\n-- \nVP Sales`);
    assert.equal(signedBody(`${body}\n\n`, { name: 'Grace', signature: null }), body);
  });
});

describe('a signature that brings its own closing', () => {
  it('takes the place of the writer\'s closing; the rest is the signature, under its separator', () => {
    assert.equal(signOff({ name: 'Grace Hopper', signature: 'Cheers,\nGrace' }), 'Cheers,\n-- \nGrace');
    assert.equal(signOff({ name: 'Grace Hopper', signature: 'Best,\n\nGrace Hopper\nVP Sales' }), 'Best,\n-- \nGrace Hopper\nVP Sales');
    assert.equal(signOff({ name: 'Grace Hopper', signature: 'Cheers,' }), 'Cheers,\nGrace Hopper');
    const body = `Hi Ada,\n\nThanks.\n\n${signOff({ name: 'Grace Hopper', signature: 'Cheers,\nGrace' })}`;
    assert.equal(signedBody(body, { name: 'Grace Hopper', signature: 'Cheers,\nGrace' }), body);
  });
});
