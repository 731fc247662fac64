// checkDraft: the checks every draft is held to (DESIGN §12), whatever engine wrote it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyWordCount, checkDraft, feedbackWordLimit } from '../../src/agent/draft-checks.ts';
import type { RunContext } from '../../src/agent/engine.ts';
import type { AnalysisOutput, ResearchOutput } from '../../src/schemas/outputs.ts';
import { cpuPerCall, timedCpu } from '../support/thread-cpu.ts';

const TRANSCRIPT = [
  '[00:00:04] Grace: Thanks for making the time, Ada.',
  '[00:00:11] Ada: Honestly, um, my reps spend about 15 hours a week copying call notes into Salesforce.',
  '[00:01:19] Ada: We have budget approved for Q3, but price is my main worry.',
  '[00:02:06] Ada: Can you send me the security documentation first?',
  '[00:02:12] Grace: I’ll send the security documentation today, and I’ll put together a pilot plan by Friday.',
].join('\n');

const ANALYSIS: AnalysisOutput = {
  engine: 'offline',
  painPoints: ['My reps spend about 15 hours a week copying call notes into Salesforce.'],
  objections: ['Price is my main worry.'],
  buyingSignals: ['We have budget approved for Q3.'],
  nextSteps: ['Grace sends the pilot plan by Friday.'],
  sentiment: 'positive',
  facts: {
    figures: [], dates: ['Friday'], people: [], tools: ['Salesforce'],
    budgetAndTiming: ['We have budget approved for Q3.'],
    commitments: ['I’ll send the security documentation today', 'I’ll put together a pilot plan by Friday'],
  },
};

const RESEARCH: ResearchOutput = {
  engine: 'offline',
  website: { url: null, fetched: false, status: null, error: null, title: null, description: null, summary: null },
  facts: [],
  sources: [],
};

function context(overrides: Partial<RunContext> = {}): RunContext {
  return {
    runId: 'run-1',
    lead: { id: 'lead-1', name: 'Ada Lovelace', email: null, companyName: 'Kestrel Logistics', companyWebsite: null },
    call: { id: 'call-1', title: 'Discovery', transcript: TRANSCRIPT, occurredAt: null },
    senderName: 'Grace Hopper',
    research: RESEARCH,
    analysis: ANALYSIS,
    ...overrides,
  };
}

const CLEAN = {
  subject: 'Kestrel Logistics: your pilot plan',
  body: 'Hi Ada,\n\nThanks for the call. Your reps lose about 15 hours a week to call notes in Salesforce.\n\n'
    + 'Here is the security documentation, and I will put together a pilot plan by Friday.\n\n'
    + 'Would a two-week pilot work for you?\n\nBest regards,\nGrace Hopper',
};

const withBody = (body: string) => ({ ...CLEAN, body });
const fill = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length));

describe('checkDraft', () => {
  it('passes a short, clean draft with both commitments, in its own words', () => {
    const passed = { passed: true, failed: [], grounding: { grounded: true, unsupported: [] } };
    assert.deepEqual(checkDraft(CLEAN, context()), passed);
  });

  it('counts the body’s words without the greeting, the closing and the signature', () => {
    const words = (n: number) => Array.from({ length: n }, () => 'pilot').join(' ');
    assert.equal(bodyWordCount(`Hi Ada,\n\n${words(150)}\n\nBest regards,\nGrace Hopper\nHead of Sales`), 150);
    assert.equal(bodyWordCount(`Dear Ada,\n\n${words(20)}\n\n-- \nGrace Hopper, Head of Sales, Example Ltd.`), 20);
    const middle = CLEAN.body.split('\n\n').slice(1, 3).join('\n\n');
    const over = checkDraft(withBody(`Hi Ada,\n\n${middle} ${words(140)}\n\nBest,\nGrace`), context());
    assert.equal(over.passed, false);
    assert.match(over.failed[0]!, /^word limit: the body has 1\d\d words; at most 150 \(greeting and signature/);
  });

  it('holds the body to the limit the reviewer’s feedback names', () => {
    assert.equal(feedbackWordLimit('Keep it under 100 words please'), 100);
    assert.equal(feedbackWordLimit('80 words max, and more formal'), 80);
    assert.equal(feedbackWordLimit('a 120-word limit'), 120);
    assert.equal(feedbackWordLimit('Make it shorter'), null);
    const report = checkDraft(CLEAN, context({ feedback: 'At most 20 words.' }));
    assert.match(report.failed[0]!, /^word limit: the body has \d+ words; at most 20 /);
  });

  it('names each commitment missing, or missing its date', () => {
    const promises = 'Here is the security documentation, and I will put together a pilot plan by Friday.';
    const without = checkDraft(withBody(CLEAN.body.replace(promises, 'More soon.')), context());
    assert.deepEqual(without.failed, [
      'commitment missing: “I’ll send the security documentation today”',
      'commitment missing: “I’ll put together a pilot plan by Friday”',
    ]);
    const undated = checkDraft(withBody(CLEAN.body.replace('by Friday', 'by Monday')), context());
    assert.deepEqual(undated.failed, ['commitment missing: “I’ll put together a pilot plan by Friday”']);
    const reworded = withBody(CLEAN.body.replace('put together a pilot plan', 'send the pilot plan over'));
    assert.equal(checkDraft(reworded, context()).passed, true);
  });

  it('names speaker labels, timestamps, markup and fillers leaked from the transcript', () => {
    const leaky = withBody(CLEAN.body.replace('Would a two-week pilot work for you?', [
      'Ada: the pilot comes first.',
      'Speaker 2: and then the rollout.',
      'At 00:02:12 we spoke of it --> and [inaudible] um, <v Ada>yes.',
    ].join('\n')));
    assert.deepEqual(checkDraft(leaky, context()).failed, [
      'leak: the speaker label “Ada:”',
      'leak: the speaker label “Speaker 2:”',
      'leak: the timestamp “00:02:12”',
      'leak: the transcript markup “[inaudible]”',
      'leak: the filler “um”',
    ]);
    const ask = 'Would a two-week pilot work for you?';
    const fine = withBody(CLEAN.body.replace(ask, 'Next steps: could we speak at 14:30, umbrella or not?'));
    assert.deepEqual(checkDraft(fine, context()).failed, []);
    const dear = withBody(`Dear Ada:\n\n${CLEAN.body.slice('Hi Ada,\n\n'.length)}`);
    assert.deepEqual(checkDraft(dear, context()).failed, []);
    // Anywhere in a line: a label with its company, and an Otter export's name and time.
    const otter = 'Ada Lovelace  0:04\nWe copy notes by hand.\n\nGrace Hopper  0:09\nI see.';
    const inline = withBody(CLEAN.body.replace(ask, 'Then Ada Lovelace (Kestrel): yes. And Grace Hopper 0:09 agreed.'));
    const otterCall = context({ call: { id: 'c', title: null, occurredAt: null, transcript: otter } });
    assert.deepEqual(checkDraft(inline, otterCall).failed.filter((f) => f.startsWith('leak')), [
      'leak: the speaker label “Ada Lovelace:”',
      'leak: the speaker label “Grace Hopper:”',
    ]);
  });

  it('names a run of 8 words pasted from the transcript, pronouns swapped or not, and not a run of 7', () => {
    const ours = 'Your reps lose about 15 hours a week to call notes in Salesforce.';
    const said = 'You said your reps spend about 15 hours a week copying call notes.';
    const pasted = withBody(CLEAN.body.replace(ours, said));
    assert.deepEqual(checkDraft(pasted, context()).failed, [
      'copied from the transcript: “your reps spend about 15 hours a week copying call notes”',
    ]);
    const seven = withBody(CLEAN.body.replace(ours, 'I gather your reps spend about 15 hours a day on notes.'));
    assert.deepEqual(checkDraft(seven, context()).failed, []);
  });

  it('names the grounding check’s unsupported claims', () => {
    const invented = withBody(
      CLEAN.body.replace('Thanks for the call.', 'Thanks. I know the timing is tight. Your Berlin office too.'),
    );
    assert.deepEqual(checkDraft(invented, context()).failed, [
      'ungrounded: “I know the timing is tight.”: a claim about the buyer that nothing they said backs',
      'ungrounded: “Berlin” in “Your Berlin office too.”',
    ]);
  });

  it('reads a megabyte of draft against a megabyte of transcript in time that grows linearly', () => {
    const line = 'Ada: my reps spend about 15 hours a week copying call notes into Salesforce, um, [inaudible]\n';
    const sentence = 'Ada: your reps spend about 15 hours a week copying call notes into Salesforce. ';
    const run = (size: number) => checkDraft(
      { subject: 'Hello', body: sentence.repeat(Math.ceil(size / sentence.length)) },
      context({ call: { id: 'c', title: null, occurredAt: null, transcript: fill(line, size) } })
    );
    const { value, ms } = timedCpu(() => run(1024 * 1024));
    assert.ok(ms < 60_000, `${Math.round(ms)} ms`);
    assert.ok(value.failed.length <= 5 + 5 + 5 + 2 + value.grounding.unsupported.length, String(value.failed.length));
    assert.ok(value.failed.some((f) => f.startsWith('copied from the transcript: ')));
    assert.ok(value.failed.some((f) => f.startsWith('word limit: ')));
    const ratios: number[] = [];
    while (ratios.length < 3 && !ratios.some((r) => r < 8)) {
      const shortMs = cpuPerCall(() => run(128 * 1024));
      ratios.push(cpuPerCall(() => run(512 * 1024)) / shortMs);
    }
    assert.ok(ratios.some((r) => r < 8), `time(4n) / time(n): ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
  });
});
