// Send windows across daylight-saving switches (DESIGN §14), at fixed instants around Europe/Berlin's and
// America/New_York's 2026 switches: a 09:00 window stays 09:00 local on both sides, a start inside the spring gap
// moves forward to the switch, one repeated in the autumn is its first occurrence.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_WINDOW, isInWindow, localDate, nextWindowStart, startOfNextDay } from '../../src/domain/sending/window.ts';
import { canonicalTimeZone } from '../../src/domain/sending/time-zones.ts';

const EVERY_DAY = [1, 2, 3, 4, 5, 6, 7];
const nineToSix = { days: EVERY_DAY, start: 9 * 60, end: 18 * 60 };
const iso = (at: Date) => at.toISOString();
const utc = (text: string) => new Date(text);

describe('send windows', () => {
  it('keeps a 09:00 start at 09:00 local on both sides of Berlin\'s spring switch (29 March 2026)', () => {
    assert.equal(iso(nextWindowStart(utc('2026-03-27T20:00:00Z'), nineToSix, 'Europe/Berlin')), '2026-03-28T08:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-03-28T20:00:00Z'), nineToSix, 'Europe/Berlin')), '2026-03-29T07:00:00.000Z');
  });

  it('keeps it on both sides of Berlin\'s autumn switch (25 October 2026)', () => {
    assert.equal(iso(nextWindowStart(utc('2026-10-24T20:00:00Z'), nineToSix, 'Europe/Berlin')), '2026-10-25T08:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-10-23T20:00:00Z'), nineToSix, 'Europe/Berlin')), '2026-10-24T07:00:00.000Z');
  });

  it('keeps it across New York\'s switches (8 March and 1 November 2026)', () => {
    assert.equal(iso(nextWindowStart(utc('2026-03-08T00:00:00Z'), nineToSix, 'America/New_York')), '2026-03-08T13:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-03-07T00:00:00Z'), nineToSix, 'America/New_York')), '2026-03-07T14:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-11-01T00:00:00Z'), nineToSix, 'America/New_York')), '2026-11-01T14:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-10-31T00:00:00Z'), nineToSix, 'America/New_York')), '2026-10-31T13:00:00.000Z');
  });

  it('moves a start inside the spring gap forward to the switch', () => {
    const early = { days: EVERY_DAY, start: 2 * 60 + 30, end: 6 * 60 };
    // 02:30 does not exist in Berlin on 29 March 2026: 02:00 CET became 03:00 CEST at 01:00 UTC.
    assert.equal(iso(nextWindowStart(utc('2026-03-29T00:00:00Z'), early, 'Europe/Berlin')), '2026-03-29T01:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-03-08T06:00:00Z'), early, 'America/New_York')), '2026-03-08T07:00:00.000Z');
  });

  it('takes the first of an autumn start that happens twice', () => {
    const early = { days: EVERY_DAY, start: 2 * 60 + 30, end: 6 * 60 };
    assert.equal(iso(nextWindowStart(utc('2026-10-24T22:00:00Z'), early, 'Europe/Berlin')), '2026-10-25T00:30:00.000Z');
  });

  it('skips the days outside the window: Friday evening to Monday morning, the instant itself inside', () => {
    assert.equal(iso(nextWindowStart(utc('2026-03-27T18:00:00Z'), DEFAULT_WINDOW, 'Europe/Berlin')), '2026-03-30T06:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-03-30T10:00:00Z'), DEFAULT_WINDOW, 'Europe/Berlin')), '2026-03-30T10:00:00.000Z');
    assert.equal(iso(nextWindowStart(utc('2026-12-05T12:00:00Z'), DEFAULT_WINDOW, 'UTC')), '2026-12-07T08:00:00.000Z');
  });

  it('tells inside from outside, its end excluded', () => {
    assert.equal(isInWindow(utc('2026-03-30T05:59:59Z'), DEFAULT_WINDOW, 'Europe/Berlin'), false);
    assert.equal(isInWindow(utc('2026-03-30T06:00:00Z'), DEFAULT_WINDOW, 'Europe/Berlin'), true);
    assert.equal(isInWindow(utc('2026-03-30T15:59:59Z'), DEFAULT_WINDOW, 'Europe/Berlin'), true);
    assert.equal(isInWindow(utc('2026-03-30T16:00:00Z'), DEFAULT_WINDOW, 'Europe/Berlin'), false);
    assert.equal(isInWindow(utc('2026-03-28T10:00:00Z'), DEFAULT_WINDOW, 'Europe/Berlin'), false, 'a Saturday');
    assert.equal(isInWindow(utc('2026-03-30T10:00:00Z'), { days: [1], start: 0, end: 1440 }, 'America/New_York'), true);
  });

  it('names the local day, and finds the next one\'s start across a switch', () => {
    assert.equal(localDate(utc('2026-03-29T22:30:00Z'), 'Europe/Berlin'), '2026-03-30');
    assert.equal(localDate(utc('2026-03-29T22:30:00Z'), 'America/New_York'), '2026-03-29');
    assert.equal(iso(startOfNextDay(utc('2026-03-28T12:00:00Z'), 'Europe/Berlin')), '2026-03-28T23:00:00.000Z');
    assert.equal(iso(startOfNextDay(utc('2026-03-29T12:00:00Z'), 'Europe/Berlin')), '2026-03-29T22:00:00.000Z');
  });

  it('knows IANA names and their aliases, and refuses anything else', () => {
    assert.equal(canonicalTimeZone('Europe/Berlin'), 'Europe/Berlin');
    assert.equal(canonicalTimeZone('europe/berlin'), 'Europe/Berlin');
    assert.ok(canonicalTimeZone('Asia/Calcutta'));
    assert.equal(canonicalTimeZone('UTC'), 'UTC');
    for (const bad of ['Mars/Olympus', '+02:00', '', 'Europe/Berlin/x/y', 'a'.repeat(65), '../etc']) assert.equal(canonicalTimeZone(bad), null, bad);
  });
});
