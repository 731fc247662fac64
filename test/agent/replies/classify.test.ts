// The offline reply classifier (src/agent/replies/) over a corpus of replies written for these tests
// (test/fixtures/replies/corpus.json: English, German, French and Spanish; absences as Outlook, Gmail and Exchange send
// them, unsubscribe requests phrased many ways, bounces, auto replies, referrals, short and long replies with the
// e-mail they answer quoted below): at least 95 % read right, class, date and person alike, and no unsubscribe missed,
// in the CPU pool as the reply check runs it. Dates are read relative to the Date header in its own offset; a hostile
// 1 MiB reply is read in time linear in its size, within the pool's budget.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { classifyReply, MAX_TEXT_CHARS } from '../../../src/agent/replies/classify.ts';
import { normalise, NOT_NOW, REFERRAL, UNSUBSCRIBE } from '../../../src/agent/replies/cues.ts';
import { ownText } from '../../../src/agent/replies/own-text.ts';
import { REPLY_CLASSES, type ReplyClassification, type ReplyInput } from '../../../src/agent/replies/types.ts';
import { createCpuPool } from '../../../src/cpu/pool.ts';
import { timedCpu } from '../../support/thread-cpu.ts';

interface Example {
  id: string;
  lang: 'en' | 'de' | 'fr' | 'es';
  date: string;
  headers: Record<string, string>;
  text: string;
  expected: Partial<ReplyClassification> & Pick<ReplyClassification, 'classification'>;
}

const corpus: Example[] = JSON.parse(readFileSync(new URL('../../fixtures/replies/corpus.json', import.meta.url), 'utf8'));
const expected = (example: Example): ReplyClassification =>
  ({ returnsOn: null, followUpAfter: null, person: null, ...example.expected });
const input = (example: Example): ReplyInput => ({ headers: example.headers, text: example.text, date: example.date });
const MiB = 1024 * 1024;
/** CPU time linear work stays well inside on 1 MiB, even on a loaded machine. */
const BOUND_MS = 2_000;

describe('the reply corpus', () => {
  it('holds at least 60 replies in four languages, each class among them', () => {
    assert.ok(corpus.length >= 60, `${corpus.length} replies`);
    assert.deepEqual(new Set(corpus.map((e) => e.lang)), new Set(['en', 'de', 'fr', 'es']));
    assert.deepEqual(new Set(corpus.map((e) => e.expected.classification)), new Set(REPLY_CLASSES));
    assert.equal(new Set(corpus.map((e) => e.id)).size, corpus.length, 'ids are unique');
    for (const e of corpus) assert.ok(!Number.isNaN(new Date(e.date).getTime()), e.id);
  });
});

describe('classifying replies offline', () => {
  const pool = createCpuPool({ budgetMs: 5_000, threads: 2 });
  after(() => pool.close());

  it('reads at least 95 % of the corpus right in the CPU pool, and misses no unsubscribe', async (t) => {
    const results = await Promise.all(corpus.map((e) => pool.run('classifyReply', input(e))));
    const wrong = corpus.filter((e, i) => !isDeepStrictEqual(results[i], expected(e)))
      .map((e) => `${e.id}: ${JSON.stringify(results[corpus.indexOf(e)])}`);
    const accuracy = (corpus.length - wrong.length) / corpus.length;
    t.diagnostic(`accuracy ${(accuracy * 100).toFixed(1)} % (${corpus.length - wrong.length}/${corpus.length})`);
    assert.ok(accuracy >= 0.95, wrong.join('\n'));
    const missed = corpus.filter((e, i) => e.expected.classification === 'unsubscribe' && results[i]!.classification !== 'unsubscribe');
    assert.deepEqual(missed.map((e) => e.id), []);
  });

  it('reads dates relative to the Date header, in the offset it was written in', () => {
    const absent = (date: string | null, receivedAt?: Date) => classifyReply({
      headers: { subject: 'Automatic reply: Pilot', 'auto-submitted': 'auto-replied' }, text: 'I am out of the office and back on Monday.', date,
      ...(receivedAt ? { receivedAt } : {}),
    }).returnsOn;
    assert.equal(absent('Wed, 4 Mar 2026 10:00:00 +0000'), '2026-03-09');
    assert.equal(absent('Tue, 10 Mar 2026 10:00:00 +0000'), '2026-03-16');
    // Sunday evening in California is Monday in UTC: "Monday" is the next day where it was written.
    assert.equal(absent('Sun, 8 Mar 2026 20:00:00 -0800'), '2026-03-09');
    // Without a Date header, the time it arrived is the reference.
    assert.equal(absent(null, new Date('2026-03-18T09:00:00Z')), '2026-03-23');
    assert.equal(absent('not a date', new Date('2026-03-18T09:00:00Z')), '2026-03-23');

    const later = (text: string, date: string) => classifyReply({ headers: {}, text, date }).followUpAfter;
    assert.equal(later('Not now, circle back in Q1.', 'Tue, 3 Mar 2026 10:00:00 +0000'), '2027-01-01');
    assert.equal(later('Not now, circle back next quarter.', 'Mon, 30 Nov 2026 10:00:00 +0000'), '2027-01-01');
    assert.equal(later('Momentan nicht, vielleicht im nächsten Monat.', 'Fri, 18 Dec 2026 10:00:00 +0100'), '2027-01-01');
    // "may" is a verb: not a month without a word before it that makes it one.
    assert.equal(later('Not right now. We may look again later.', 'Tue, 3 Mar 2026 10:00:00 +0000'), null);
  });

  it('reads what the reply says, not the e-mail it quotes or the subject it echoes, nor a signature as the person referred to', () => {
    const quoted = classifyReply({ headers: {}, date: 'Tue, 3 Mar 2026 10:00:00 +0000', text: [
      'Thanks.', '', 'On Mon, 2 Mar 2026 at 09:00, Alex <alex@leadrun.example>', 'wrote:', '> Reply "unsubscribe" to stop these.',
    ].join('\n') });
    assert.equal(quoted.classification, 'other');
    const signed = classifyReply({ headers: {}, date: null, text: "I'm not the right person for this.\n\nBest,\nDana Park" });
    assert.deepEqual(signed, { classification: 'other', returnsOn: null, followUpAfter: null, person: null });
    // A person's reply echoes our subject: words of an autoresponder's subject in it do not make it one.
    const echoed = classifyReply({ headers: { subject: 'Re: Taking the guesswork away from ticket triage' }, date: null, text: "Sounds good, let's talk." });
    assert.equal(echoed.classification, 'interested');
    // "call" is a step towards a meeting, except where the buyer asks not to be called.
    assert.equal(classifyReply({ headers: {}, date: null, text: "Please don't call me again." }).classification, 'unsubscribe');
    assert.equal(ownText('Ja.\n\n-----Ursprüngliche Nachricht-----\nVon: Alex'), 'Ja.');
    assert.equal(ownText('Oui.\n\nDe : Alex\nEnvoyé : lundi\nÀ : Camille'), 'Oui.');
  });

  it('reads a hostile 1 MiB reply in time linear in its size, within the budget in the pool', async () => {
    // Lines that begin like a quote's attribution and never end it, pointing phrases without a name, dates everywhere,
    // capitalised words without end, and one line of 1 MiB without a break.
    const units = [
      'On Monday talk to back on Monday and the right person is contact circle back in Q3 ',
      `${'Talk To Maria Lopez Garcia Diaz '.repeat(20)}\n`,
      'On 1.2.3.4.5.6.7.8.9.10.11.12. 14.03. 6/1/6/1/6/1 bis einschließlich ',
      'remove'.padEnd(200, ' '),
    ];
    for (const unit of units) {
      const hostile: ReplyInput = { headers: { subject: 'Re: '.repeat(10_000) }, text: unit.repeat(Math.ceil(MiB / unit.length)), date: 'Tue, 3 Mar 2026 10:00:00 +0000' };
      const started = Date.now();
      const result = await pool.run('classifyReply', hostile);
      assert.ok(REPLY_CLASSES.includes(result.classification));
      assert.ok(Date.now() - started < 5_000, `${unit.slice(0, 20)}: ${Date.now() - started} ms`);
      // The quoted e-mail's finder and the cues alone, with no cap, on the whole 1 MiB: quadratic work would take
      // minutes on it; linear work takes milliseconds (a bound of CPU time, as page-hostile.test.ts measures).
      const whole = unit.repeat(Math.ceil(MiB / unit.length));
      const { ms: finding } = timedCpu(() => ownText(whole));
      const { ms: cueing } = timedCpu(() => [REFERRAL, NOT_NOW, UNSUBSCRIBE].map((cue) => cue.test(normalise(whole))));
      assert.ok(finding < BOUND_MS && cueing < BOUND_MS, `${unit.slice(0, 20)}: ${finding.toFixed(0)} ms, ${cueing.toFixed(0)} ms`);
    }
    const { ms } = timedCpu(() => classifyReply({ headers: {}, text: 'x'.repeat(MiB), date: null }));
    assert.ok(ms < BOUND_MS, `${ms} ms`);
    assert.equal(MAX_TEXT_CHARS, 64 * 1024);
  });
});
