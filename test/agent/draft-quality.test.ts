// Drafts worth sending: on realistic calls from different industries the offline draft carries the call's facts
// (figures, people and roles, tools, budget and timing, every promise the rep made), stays grounded, is signed, and
// on regeneration follows what reviewers ask for without pasting their words in.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { PreviousDraft, RunContext } from '../../src/agent/engine.ts';
import { offlineRules } from '../../src/agent/engines/offline.ts';
import { SaidIndex } from '../../src/agent/engines/offline/copying.ts';
import { sentencesOf } from '../../src/agent/engines/offline/facts.ts';
import { bodyWords, wordCount } from '../../src/agent/engines/offline/feedback.ts';
import { checkGrounding } from '../../src/agent/grounding.ts';
import { assertStepOutput } from '../../src/agent/output-check.ts';
import type { AnalysisOutput, ResearchOutput, StrategyOutput, WriterOutput } from '../../src/schemas/outputs.ts';
import { signOff } from '../../src/agent/sign-off.ts';
import { createCpuPool } from '../../src/cpu/pool.ts';
import { contextFor, QUALITY_CALLS, type QualityCall } from './calls.ts';

type Ctx = RunContext & { research: ResearchOutput };

function prepare(ctx: Ctx): Ctx & { analysis: AnalysisOutput; strategy: StrategyOutput } {
  const analysis = offlineRules.analyse(ctx).output;
  assertStepOutput('ANALYSIS', analysis);
  const strategy = offlineRules.strategise({ ...ctx, analysis }).output;
  assertStepOutput('STRATEGY', strategy);
  return { ...ctx, analysis, strategy };
}

function write(ctx: Ctx & { analysis: AnalysisOutput; strategy: StrategyOutput }, feedback: string | null = null, previousDraft: PreviousDraft | null = null): WriterOutput {
  const draft = offlineRules.write({ ...ctx, feedback, previousDraft }).output;
  assertStepOutput('WRITER', draft);
  const grounding = checkGrounding(draft, { ...ctx, feedback });
  assert.ok(grounding.grounded, `${grounding.unsupported.join('\n')}\n\n${draft.body}`);
  return draft;
}

const byIndustry = (industry: string): [QualityCall, number] => {
  const index = QUALITY_CALLS.findIndex((c) => c.industry === industry);
  return [QUALITY_CALLS[index]!, index];
};

function prepared(industry: string, signature: string | null = null) {
  const [call, index] = byIndustry(industry);
  const ctx = contextFor(call, index);
  return prepare({ ...ctx, sender: { name: call.sender.name, signature } });
}

/** The words of a text, lower-cased, for comparing runs of them. */
const wordsOf = (text: string) => text.toLowerCase().replace(/[’']/g, "'").split(/[^\p{L}\p{N}'%$€£]+/u).filter(Boolean);

/** Whether any `n` words in a row of `feedback` appear in a row in `draft`. */
function echoes(draft: string, feedback: string, n = 8): boolean {
  const body = ` ${wordsOf(draft).join(' ')} `;
  const words = wordsOf(feedback);
  for (let i = 0; i + n <= words.length; i++) if (body.includes(` ${words.slice(i, i + n).join(' ')} `)) return true;
  return false;
}

describe('the offline draft carries the facts of the call', () => {
  let used = 0;
  let present = 0;
  after(() => {
    // The figure for the set: facts the drafts carry over facts the calls hold (17.4% before the facts were read).
    console.log(`# facts used / present: ${used}/${present} = ${((100 * used) / present).toFixed(1)}%`);
  });

  for (const [index, call] of QUALITY_CALLS.entries()) {
    it(`${call.industry}: every fact, grounded, signed`, () => {
      const ctx = prepare({ ...contextFor(call, index), sender: call.sender });
      const draft = write(ctx);
      // DESIGN §12: every promise the rep made is in it; of the rest (figures, people, tools, timing) it names the
      // one or two that matter most, in at most 150 words, never listing the call back or pasting 8 words of it.
      const promised = call.facts.filter((f) => ctx.analysis.facts!.commitments.some((c) => f.pattern.test(c)));
      const missing = promised.filter((f) => !f.pattern.test(draft.body)).map((f) => f.what);
      const carried = call.facts.filter((f) => !promised.includes(f) && f.pattern.test(draft.body));
      used += promised.length - missing.length + carried.length;
      present += call.facts.length;
      assert.ok(promised.length > 0, `${call.industry}: the call's promises are among its facts`);
      assert.deepEqual(missing, [], draft.body);
      assert.ok(carried.length >= 1, `${call.industry}: names what matters most to the buyer\n${draft.body}`);
      assert.ok(bodyWords(draft.body) <= 150, draft.body);
      assert.doesNotMatch(draft.body, /^\s*(?:[-•*]|\d+\.)\s/m, 'no bullets');
      assert.equal(new SaidIndex(sentencesOf(call.transcript, call.lead.name, call.sender.name, call.lead.companyName).map((s) => s.text)).copiedRun(draft.body), null, draft.body);
      assert.ok(draft.body.endsWith(`\n\n${signOff(call.sender)}`), draft.body);
      assert.doesNotMatch(draft.body, /undefined|null|\[object|\{|\}/);
      assert.deepEqual(write(ctx), draft, 'the same input gives the same draft');
    });
  }

  it('ANALYSIS names the facts: figures with what they measure, people with roles, tools, timing and the rep’s promises', () => {
    const { analysis } = prepared('warehousing');
    const facts = analysis.facts!;
    assert.ok(facts.figures.some((f) => f.value === '3%' && /mis-pick rate/.test(f.about)), JSON.stringify(facts.figures));
    assert.ok(facts.figures.some((f) => f.value.startsWith('$45')), JSON.stringify(facts.figures));
    assert.deepEqual(facts.people, [{ name: 'Daniel', role: 'COO', side: 'prospect' }]);
    assert.deepEqual(facts.tools, ['NetSuite', 'spreadsheets']);
    assert.ok(facts.dates.some((d) => d.endsWith('Q3')) && facts.dates.some((d) => /end of the month/.test(d)), JSON.stringify(facts.dates));
    assert.ok(facts.budgetAndTiming.some((s) => /^Budget is approved for Q3/.test(s)), JSON.stringify(facts.budgetAndTiming));
    assert.deepEqual(facts.commitments, ['I’ll send a pilot outline by Friday', 'I’ll share two references from distributors your size']);

    const people = (industry: string) => prepared(industry).analysis.facts!.people.map((p) => `${p.name} (${p.role})`);
    assert.deepEqual(people('software support'), ['Marco (from IT)', 'Elena (VP of Support)']);
    assert.deepEqual(people('manufacturing'), ['Ingrid Holm (plant manager)', 'Felix (from procurement)']);
    assert.deepEqual(people('accounting'), ['Robert Lang (managing partner)', 'Mei (ops lead)']);
    // The prospect's own "I'll loop in Marco" is no promise of the rep's.
    assert.deepEqual(prepared('software support').analysis.facts!.commitments, [
      'I’ll send you a short security overview and a sample rollout plan',
      'I’ll set up a call with our onboarding lead next week',
    ]);
  });

  it('reads call notes: the note-taker’s “I’ll” is the rep’s promise, not something the prospect said', () => {
    const notes = 'Call with Ada, 3 March. She said their month-end close takes 6 days and the controller, Ben, is burned out. '
      + 'They use Xero and Excel. Budget approved for Q4. I’ll send a pricing sheet and I’ll set up a demo with Ben next Tuesday.';
    const base = contextFor(QUALITY_CALLS[0]!, 0);
    const ctx = prepare({ ...base, lead: { ...base.lead, name: 'Ada Lovelace' }, call: { ...base.call, transcript: notes } });
    const facts = ctx.analysis.facts!;
    assert.deepEqual(facts.commitments, ['I’ll send a pricing sheet', 'I’ll set up a demo with Ben next Tuesday']);
    assert.deepEqual(facts.people, [{ name: 'Ben', role: 'controller', side: 'prospect' }]);
    assert.deepEqual(facts.figures.map((f) => f.value), ['6 days']);
    const draft = write(ctx);
    // The pain with its figure and both promises; the tools and the budget are not listed back (DESIGN §12).
    for (const fact of [/6 days/, /Ben/, /I['’]ll send a pricing sheet/, /demo (?:with|including) Ben next Tuesday/]) assert.match(draft.body, fact);
    assert.doesNotMatch(draft.body, /You['’]ll send|Call with Ada|3 March/);
  });

  it('ends with the sender’s signature verbatim when there is one, with no second closing when it brings its own', () => {
    const ctx = prepared('warehousing', 'Grace Hopper\nHead of Sales, Analytical Engines Ltd');
    // The signature opens with the name: the name is not written above the separator as well.
    assert.ok(write(ctx).body.endsWith('\n\nBest regards,\n-- \nGrace Hopper\nHead of Sales, Analytical Engines Ltd'));
    const own = prepared('warehousing', 'Cheers,\nGrace');
    assert.ok(write(own).body.endsWith('\n\nCheers,\n-- \nGrace'), write(own).body);
    assert.doesNotMatch(write(own).body, /Best regards/);
    const nobody = prepare({ ...contextFor(QUALITY_CALLS[0]!, 0), senderName: null });
    assert.ok(write(nobody).body.endsWith('\n\nBest regards,'));
  });
});

describe('a regeneration follows the reviewer’s feedback', () => {
  it('keeps to a word limit, signature and greeting counted', () => {
    for (const [index, call] of QUALITY_CALLS.entries()) {
      const ctx = prepare({ ...contextFor(call, index), sender: { name: call.sender.name, signature: call.sender.signature } });
      // Counted as DESIGN §12 and the scorer count a body: without the greeting line and the signature.
      for (const [feedback, most] of [['Keep it under 100 words.', 99], ['No more than 60 words please', 60], ['under 35 words', 34]] as const) {
        const draft = write(ctx, feedback);
        assert.ok(bodyWords(draft.body) <= most, `${call.industry}, “${feedback}”: ${bodyWords(draft.body)} words\n${draft.body}`);
        for (const promise of ctx.analysis.facts!.commitments) {
          const object = call.facts.find((f) => f.pattern.test(promise));
          if (object) assert.match(draft.body, object.pattern, `${call.industry}, “${feedback}”: a commitment is never dropped for length`);
        }
        assert.ok(draft.body.startsWith(`Hi ${call.lead.name.replace(/^Dr\. /, '').split(' ')[0]},`), draft.body);
        if (most >= 60) assert.ok(draft.body.endsWith(call.sender.signature ?? call.sender.name), draft.body);
      }
    }
    // Under 100 words, the draft still carries the pain's figure it named and every commitment.
    const short = write(prepared('warehousing'), 'Keep it under 100 words.');
    for (const fact of [/\$45/, /pilot outline/, /two references/]) assert.match(short.body, fact);
  });

  it('becomes more formal, or more casual', () => {
    const ctx = prepared('warehousing');
    const formal = write(ctx, 'Please make it more formal.');
    assert.ok(formal.body.startsWith('Dear Maria Lopez,'), formal.body);
    assert.ok(formal.body.endsWith('Kind regards,\nGrace Hopper'));
    assert.doesNotMatch(formal.body, /\b(I’ll|I’m|it’s|That’s|doesn’t)\b/);
    const casual = write(ctx, 'A bit more casual, she is very relaxed.');
    assert.ok(casual.body.startsWith('Hey Maria,'), casual.body);
    assert.ok(casual.body.endsWith('Cheers,\nGrace Hopper'));
  });

  it('mentions what the call backs, says nothing about what it does not, and leaves out what it is asked to', () => {
    const accounting = prepared('accounting');
    const shortWithRoi = write(accounting, 'Keep it under 80 words and mention the ROI calculator.');
    assert.match(shortWithRoi.body, /ROI calculator/);
    assert.ok(wordCount(shortWithRoi.body) <= 79, shortWithRoi.body);

    const warehouse = prepared('warehousing');
    const first = write(warehouse);
    const roi = write(warehouse, 'Mention the ROI calculator.');
    assert.doesNotMatch(roi.body, /ROI|calculator/, 'nothing the call does not back');
    assert.notEqual(roi.body, first.body, 'still a new draft');

    const education = prepared('higher education');
    assert.match(write(education).body, /pricing/);
    const noPricing = write(education, "Don't mention pricing.");
    assert.doesNotMatch(`${noPricing.subject}\n${noPricing.body}`, /pricing/i);
    assert.match(noPricing.body, /pilot proposal/, 'the rest of the commitment stays');
    const dropped = write(warehouse, 'Drop the references.');
    assert.doesNotMatch(dropped.body, /references/i);
    assert.match(dropped.body, /pilot outline/);
  });

  it('takes another angle, or the focus asked for', () => {
    const ctx = prepared('manufacturing');
    const first = write(ctx);
    const other = write(ctx, 'Try another angle.');
    const lead = (body: string) => body.split('\n\n')[1];
    assert.notEqual(lead(other.body), lead(first.body), other.body);
    assert.notEqual(other.subject, first.subject);
    const focus = write(ctx, 'Focus on the budget review.');
    assert.match(lead(focus.body)!, /budget review is in October/, focus.body);
  });

  it('without feedback, gives another version each time, never the one it replaces', () => {
    for (const industry of ['warehousing', 'healthcare', 'e-commerce']) {
      const ctx = prepared(industry);
      let previous: PreviousDraft = { version: 1, ...write(ctx) };
      const seen = new Set([previous.body]);
      for (let version = 2; version <= 6; version++) {
        const draft = write(ctx, null, previous);
        assert.notEqual(draft.body, previous.body, `${industry} v${version}`);
        assert.deepEqual(write(ctx, null, previous), draft, 'deterministic by version');
        seen.add(draft.body);
        previous = { version, ...draft };
      }
      assert.ok(seen.size >= 3, `${industry}: ${seen.size} different versions`);
    }
  });

  it('never pastes the feedback in', () => {
    const feedbacks = [
      'Keep it under 100 words, the COO does not read long e-mails and Maria wants something she can forward.',
      'Please make it more formal and mention that the pilot outline is coming by Friday with the two references.',
      'Mention the ROI calculator and the fact that we have helped many companies like theirs cut mis-picks in half.',
      'This reads like a robot wrote it, can you make it sound more like a real person talking to a customer?',
      "Don't mention the price, and focus on the Q3 budget and the decision at the end of the month instead.",
      'Try another angle: lead with how much time the team loses on paper pick lists every single week.',
    ];
    for (const [industry, signature] of [['warehousing', null], ['accounting', 'Tomás']] as const) {
      const ctx = prepared(industry, signature);
      for (const feedback of feedbacks) {
        const draft = write(ctx, feedback);
        assert.ok(!echoes(`${draft.subject}\n${draft.body}`, feedback), `“${feedback}” echoed in\n${draft.body}`);
      }
    }
  });
});

describe('a hostile transcript of numbers, names and promises', () => {
  const pool = createCpuPool({ budgetMs: 10_000, threads: 1 });
  after(() => pool.close());

  it('runs the three steps and the grounding check in the CPU pool within the budget', async () => {
    const unit = [
      'Rep: I’ll send a pilot outline by Friday, and I’ll share 2 references, and I’ll send a quote, and I’ll book a visit.',
      'Maria: Daniel, our COO, and Marco from IT, and our CFO, Nadia, use NetSuite, Salesforce, HubSpot and Excel.',
      'Maria: Our mis-pick rate is 3% and 1,200 tickets cost $45 each, 12% of $20,000 by March 12 in Q3 before the end of the month.',
      'Maria: Budget is approved for Q3. Ingrid Holm, our plant manager, decides by October 15.',
    ].join('\n');
    const transcript = `${unit}\n`.repeat(Math.ceil(200_000 / (unit.length + 1)));
    assert.ok(transcript.length >= 200_000);
    const ctx: Ctx = { ...contextFor(QUALITY_CALLS[0]!, 0), call: { id: 'call-h', title: null, transcript, occurredAt: null } };
    // Each task is held to the pool's budget (10 s), which ends it with an error: no clock of the test's own, which a
    // loaded machine would make fail.
    const analysis = (await pool.run('analyse', ctx)).output;
    assertStepOutput('ANALYSIS', analysis);
    for (const list of Object.values(analysis.facts!)) assert.ok(list.length <= 8, 'every list of facts is capped');
    const strategy = (await pool.run('strategise', { ...ctx, analysis })).output;
    const draft = (await pool.run('write', { ...ctx, analysis, strategy, feedback: 'Keep it under 120 words and mention the quote.' })).output;
    assertStepOutput('WRITER', draft);
    assert.ok(wordCount(draft.body) <= 119);
    const grounding = await pool.run('checkGrounding', { draft, ctx: { ...ctx, analysis, strategy } });
    assert.equal(grounding.grounded, true, grounding.unsupported.join('\n'));
  });
});
