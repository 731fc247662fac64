// Business days for follow-ups (src/domain/sequences/schedule.ts): counted on the lead's calendar, at the same local
// time of day, across weekends and daylight-saving switches.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addBusinessDays, writeTimeOf } from '../../src/domain/sequences/schedule.ts';

describe('business days', () => {
  it('skips the weekend: Friday and Saturday 10:00 plus one are Monday 10:00', () => {
    assert.equal(addBusinessDays(new Date('2026-03-13T10:00:00.250Z'), 1).toISOString(), '2026-03-16T10:00:00.250Z');
    assert.equal(addBusinessDays(new Date('2026-03-14T10:00:00Z'), 1).toISOString(), '2026-03-16T10:00:00.000Z');
    assert.equal(addBusinessDays(new Date('2026-03-16T10:00:00Z'), 5).toISOString(), '2026-03-23T10:00:00.000Z');
  });

  it('keeps the local time of day across a daylight-saving switch', () => {
    // Friday 27 March 2026 10:00 in Berlin (UTC+1); the clocks go forward on Sunday: Monday 10:00 is UTC+2.
    assert.equal(addBusinessDays(new Date('2026-03-27T09:00:00Z'), 1, 'Europe/Berlin').toISOString(), '2026-03-30T08:00:00.000Z');
    // Friday 30 October 2026 09:00 in New York (UTC-4); the clocks go back on Sunday 1 November: Monday 09:00 is UTC-5.
    assert.equal(addBusinessDays(new Date('2026-10-30T13:00:00Z'), 1, 'America/New_York').toISOString(), '2026-11-02T14:00:00.000Z');
  });

  it('counts the days of the lead\'s calendar, not of UTC', () => {
    // Friday 23:30 in UTC is already Saturday 08:30 in Tokyo: one business day on is Monday 08:30 there.
    assert.equal(addBusinessDays(new Date('2026-03-13T23:30:00Z'), 1, 'Asia/Tokyo').toISOString(), '2026-03-15T23:30:00.000Z');
  });

  it('writes a follow-up a day before it is due, never before now', () => {
    const now = new Date('2026-03-16T10:00:00Z');
    assert.equal(writeTimeOf(new Date('2026-03-20T10:00:00Z'), now).toISOString(), '2026-03-19T10:00:00.000Z');
    assert.equal(writeTimeOf(new Date('2026-03-16T12:00:00Z'), now).toISOString(), now.toISOString());
  });
});
