// The message text: the draft as approved, and the sender's signature once, whether WRITER signed the draft or not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messageText } from '../../src/mail/message.ts';

describe('messageText', () => {
  it('adds the signature below "-- " when the draft does not end with it', () => {
    assert.equal(messageText('Hi Ada,\n\nSee you Friday.\n\n', 'Grace Hopper\nAcme'), 'Hi Ada,\n\nSee you Friday.\n\n-- \nGrace Hopper\nAcme\n');
    // A closing ends the text: the signature follows it as signOff writes it (src/agent/sign-off.ts).
    assert.equal(messageText('Hi Ada,\n\nThanks.\n\n', 'Grace Hopper\nAcme'), 'Hi Ada,\n\nThanks.\n-- \nGrace Hopper\nAcme\n');
  });

  it('sends a draft that already ends with the signature as it is, whatever its trailing spaces; line breaks as \\n', () => {
    assert.equal(messageText('Hi Ada,\n\nBest regards,\nGrace Hopper\nAcme\n', 'Grace Hopper\nAcme'), 'Hi Ada,\n\nBest regards,\nGrace Hopper\nAcme\n');
    assert.equal(messageText('Hi Ada,\r\n\r\nGrace Hopper  \r\nAcme', 'Grace Hopper\nAcme \n'), 'Hi Ada,\n\nGrace Hopper  \nAcme\n');
  });

  it('adds nothing without a signature, or with a blank one', () => {
    assert.equal(messageText('Hi Ada', null), 'Hi Ada\n');
    assert.equal(messageText('Hi Ada', ' \n '), 'Hi Ada\n');
  });
});
