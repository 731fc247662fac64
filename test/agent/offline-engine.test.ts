import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunContext } from '../../src/agent/engine.ts';
import { offlineRules as offlineEngine, wordCount } from '../../src/agent/engines/offline.ts';
import { assertStepOutput } from '../../src/agent/output-check.ts';
import type { AnalysisOutput, ResearchOutput, StrategyOutput, WriterOutput } from '../../src/schemas/outputs.ts';
import { signOff } from '../../src/agent/sign-off.ts';

const DISCOVERY_CALL = `[00:00:04] Grace: Thanks for making the time, Ada. How are things going with the sales team?
[00:00:11] Ada: Honestly, um, not great. My reps spend about 15 hours a week copying call notes into Salesforce.
[00:00:25] Grace: That's a lot. A lot of teams struggle with manual data entry, and it's frustrating.
[00:00:31] Ada: Yeah, and they're exhausted, half of them update the pipeline report on Sunday evenings.
[00:00:40] Ada: And the CRM is always out of date, so our forecast is basically a guess.
[00:00:52] Grace: What have you tried so far?
[00:00:58] Ada: We tried a virtual assistant agency but it cost us $4,000 a month and the notes were full of mistakes.
[00:01:15] Grace: Got it. How do you think about budget for this?
[00:01:19] Ada: We have budget approved for Q3. But honestly, price is my main worry after the agency.
[00:01:30] Ada: Security will also be a question, our IT team needs SOC 2 before anything touches customer data.
[00:01:41] Grace: Understood, we can share our SOC 2 report.
[00:01:47] Ada: If a pilot shows results with the Leeds team, I can sign off on a rollout to all 40 reps by the end of September.
[00:02:02] Grace: Great. How about a two-week pilot with the Leeds team?
[00:02:06] Ada: That sounds good. Can you send me the security documentation first?
[00:02:12] Grace: I'll send it over today, and I'll put together a pilot plan by Friday.
[00:02:20] Ada: Perfect, I'll loop in our CFO, Tom, for the kickoff.`;

const FACTS = [
  { text: 'Kestrel is a route-planning platform for regional carriers.', source: 'https://kestrel.example/' },
  { text: 'More than 340 carriers in 11 countries plan their deliveries with Kestrel.', source: 'https://kestrel.example/' },
  { text: 'We raised a Series B of €30 million in 2023, led by Northzone.', source: 'https://kestrel.example/about' },
];

function researched(facts = FACTS, title: string | null = 'Kestrel Logistics | Route planning for regional carriers'): ResearchOutput {
  return {
    engine: 'offline',
    website: { url: 'https://www.kestrel.example', fetched: facts.length > 0, status: 200, error: null, title, description: null, summary: null },
    facts,
    sources: facts.length > 0 ? ['https://kestrel.example/'] : [],
  };
}

function context(overrides: { transcript?: string; companyName?: string | null; senderName?: string | null; research?: ResearchOutput } = {}): RunContext & { research: ResearchOutput } {
  return {
    runId: '6a0c6c1e-5a3e-4b8e-9b57-2f1c1a7d9e10',
    lead: {
      id: 'lead-1',
      name: 'Ada Lovelace',
      email: 'ada@kestrel.example',
      companyName: overrides.companyName === undefined ? 'Kestrel Logistics' : overrides.companyName,
      companyWebsite: 'https://www.kestrel.example',
    },
    call: { id: 'call-1', title: 'Discovery', transcript: overrides.transcript ?? DISCOVERY_CALL, occurredAt: new Date('2025-03-03T10:00:00Z') },
    senderName: overrides.senderName === undefined ? 'Grace Hopper' : overrides.senderName,
    research: overrides.research ?? researched(),
  };
}

async function pipeline(ctx: RunContext & { research: ResearchOutput }, feedback?: string) {
  const analysis: AnalysisOutput = (await offlineEngine.analyse(ctx)).output;
  assertStepOutput('ANALYSIS', analysis);
  const strategy: StrategyOutput = (await offlineEngine.strategise({ ...ctx, analysis })).output;
  assertStepOutput('STRATEGY', strategy);
  const draft: WriterOutput = (await offlineEngine.write({ ...ctx, analysis, strategy, feedback: feedback ?? null })).output;
  assertStepOutput('WRITER', draft);
  return { analysis, strategy, draft };
}

describe('offline engine: analyse', () => {
  it('keeps the prospect’s own words, cleaned up, one sentence each', async () => {
    const { analysis } = await pipeline(context());
    assert.equal(analysis.engine, 'offline');
    assert.equal(analysis.painPoints[0], 'My reps spend about 15 hours a week copying call notes into Salesforce.');
    assert.ok(analysis.painPoints.includes('The CRM is always out of date, so our forecast is basically a guess.'));
    assert.ok(analysis.painPoints.some((p) => p.includes('exhausted')));
    for (const list of [analysis.painPoints, analysis.objections, analysis.buyingSignals, analysis.nextSteps]) {
      for (const sentence of list) {
        assert.doesNotMatch(sentence, /\bum\b|^\[|^(Ada|Grace):/, sentence);
        assert.match(sentence, /^[A-Z].*[.!?]$/, sentence);
      }
    }
  });

  it('takes pain points from the prospect, not from the rep', async () => {
    const { analysis } = await pipeline(context());
    assert.ok(!analysis.painPoints.some((p) => /struggle with manual data entry/.test(p)), 'the rep’s line is not a pain point');
  });

  it('finds objections, buying signals, next steps and the sentiment', async () => {
    const { analysis } = await pipeline(context());
    assert.deepEqual(analysis.objections, [
      'Price is my main worry after the agency.',
      'Security will also be a question, our IT team needs SOC 2 before anything touches customer data.',
    ]);
    assert.ok(analysis.buyingSignals.includes('We have budget approved for Q3.'));
    assert.ok(analysis.buyingSignals.some((s) => s.startsWith('If a pilot shows results')));
    // The rep's “I'll send it over today” answers the buyer's request: a commitment to send the documentation, dated.
    assert.ok(analysis.nextSteps.includes('I’ll send the security documentation today.'), analysis.nextSteps.join(' | '));
    assert.ok(analysis.nextSteps.some((s) => s.includes('pilot plan by Friday')));
    assert.equal(analysis.sentiment, 'positive');
  });

  it('reads call notes in plain prose', async () => {
    const notes =
      'Call notes, 12 May. Ada said their team loses about two days a month reconciling invoices by hand. ' +
      'She is frustrated that the finance system is slow and that errors slip through to customers. ' +
      'They already use NetSuite and are worried about another integration. She would like to see a demo next week with her controller.';
    const { analysis, draft } = await pipeline(context({ transcript: notes }));
    assert.ok(analysis.painPoints.includes('Their team loses about two days a month reconciling invoices by hand.'));
    assert.ok(analysis.painPoints.some((p) => p.includes('finance system is slow')));
    assert.deepEqual(analysis.objections, ['They already use NetSuite and are worried about another integration.']);
    assert.ok(analysis.nextSteps.some((s) => s.includes('demo next week')));
    // The notes' pains told to the buyer in our words (DESIGN §12), never the note-taker's “She” or “Ada said”.
    assert.match(draft.body, /(?:two|2) days a month/);
    assert.doesNotMatch(draft.body, /\b(?:She|she)\b|Ada said/);
    assert.doesNotMatch(draft.body, /on 12 May/, 'the date of the notes is no agreed meeting');
  });

  it('tells the rep apart by the sender’s name, and a hesitant prospect reads as negative', async () => {
    const call = [
      'Grace: A lot of teams tell me their reporting is a nightmare and completely manual.',
      'Ada: We are not convinced we need this, to be honest.',
      'Ada: It sounds too expensive for a team our size, and we already use HubSpot.',
      'Grace: Understood.',
    ].join('\n');
    const { analysis, strategy } = await pipeline(context({ transcript: call }));
    assert.deepEqual(analysis.painPoints, []);
    // Both doubts are objections, in the order said; scepticism reads as neutral (DESIGN §12: sentiment from the
    // buyer's words; the scorer maps sceptical to neutral), and the tone stays plain, never pushy.
    assert.deepEqual(analysis.objections, ['We are not convinced we need this, to be honest.', 'It sounds too expensive for a team our size, and we already use HubSpot.']);
    assert.notEqual(analysis.sentiment, 'positive');
    assert.doesNotMatch(strategy.tone, /confident|enthusiastic/);
  });

  it('tells the speakers apart without names: the one asking questions is selling', async () => {
    const call = [
      'Speaker 1: How do you handle renewals today? Who owns them?',
      'Speaker 2: Our renewals live in a spreadsheet and we miss about one in ten of them.',
      'Speaker 1: What does a missed renewal cost you? And how often does it happen?',
      'Speaker 2: It is painful, we lost two big customers last quarter.',
    ].join('\n');
    const { analysis } = await pipeline(context({ transcript: call }));
    assert.deepEqual(analysis.painPoints.toSorted(), [
      'It is painful, we lost two big customers last quarter.',
      'Our renewals live in a spreadsheet and we miss about one in ten of them.',
    ]);
  });

  it('gives empty lists for an empty transcript', async () => {
    const { analysis, draft } = await pipeline(context({ transcript: '   ' }));
    assert.deepEqual(
      { painPoints: analysis.painPoints, objections: analysis.objections, buyingSignals: analysis.buyingSignals, nextSteps: analysis.nextSteps },
      { painPoints: [], objections: [], buyingSignals: [], nextSteps: [] },
    );
    assert.equal(analysis.sentiment, 'neutral');
    assert.match(draft.subject, /Kestrel Logistics/);
  });
});

describe('offline engine: strategise', () => {
  it('builds the angle on the strongest pain and a research fact, and offers the pilot that was discussed', async () => {
    const { strategy } = await pipeline(context());
    assert.equal(strategy.engine, 'offline');
    assert.match(strategy.angle, /15 hours a week copying call notes/);
    // Website facts do not pad the e-mail (DESIGN §12): the angle is the call's.
    assert.doesNotMatch(strategy.angle, /340 carriers|Series B/);
    assert.match(strategy.callToAction, /pilot/);
    assert.ok(strategy.valuePropositions.length >= 2);
    assert.ok(strategy.valuePropositions.some((v) => /price is my main worry/i.test(v)), 'answers the price objection');
    assert.match(strategy.tone, /warm/);
  });

  it('offers a short call when no pilot was mentioned', async () => {
    const call = 'Ada: Our invoicing is completely manual and it takes us days every month.\nGrace: Thanks, that helps.';
    const { strategy } = await pipeline(context({ transcript: call }));
    assert.doesNotMatch(strategy.callToAction, /pilot/);
    assert.match(strategy.callToAction, /short call next week/);
  });
});

describe('offline engine: write', () => {
  it('writes an e-mail that names the company and the concern, greets by first name and is signed', async () => {
    const { draft } = await pipeline(context());
    assert.equal(draft.engine, 'offline');
    assert.ok(draft.subject.length <= 80);
    assert.match(draft.subject, /Kestrel Logistics/);
    assert.ok(draft.body.startsWith('Hi Ada,\n\n'));
    // Opens on the call, names the pain with its figure in our words (not pasted), every commitment with its date.
    assert.match(draft.body.split('\n\n')[1]!, /\bcall\b/);
    assert.match(draft.body, /15 hours a week copying call notes/);
    assert.doesNotMatch(draft.body, /My reps spend about 15 hours a week copying call notes into Salesforce/);
    assert.match(draft.body, /today, I['’]ll send the security documentation/i);
    assert.match(draft.body, /by Friday, I['’]ll prepare a pilot plan/i);
    assert.match(draft.body, /pilot/);
    assert.ok(draft.body.endsWith(`\n\n${signOff({ name: 'Grace Hopper', signature: null })}`), draft.body);
    assert.doesNotMatch(draft.body, /undefined|null|\[object|\{|\}/);
  });

  it('does not pad the body with website facts (DESIGN §12): the call is what the e-mail is about', async () => {
    const { draft } = await pipeline(context());
    for (const claim of ['340 carriers', 'Series B', 'Northzone', 'route-planning platform', 'your site', 'your website']) {
      assert.ok(!draft.body.includes(claim), claim);
    }
    const { draft: bare } = await pipeline(context({ research: researched([]) }));
    assert.equal(bare.body, draft.body, 'the research changes nothing in the body');
  });

  it('falls back to the website title, then the host, for the company name', async () => {
    const { draft: fromTitle } = await pipeline(context({ companyName: null }));
    assert.match(fromTitle.subject, /Kestrel Logistics/);
    assert.doesNotMatch(fromTitle.subject, /Route planning/);

    const { draft: fromHost } = await pipeline(context({ companyName: null, research: researched([], null) }));
    assert.match(fromHost.subject, /kestrel\.example/);
    assert.doesNotMatch(fromHost.subject, /www\./);
  });

  it('writes a one-line subject whatever the company’s name holds: line breaks and encoded words dropped', async () => {
    const names = [
      'Kestrel\u2028Bcc: all@example.com', 'Kestrel\u0085Logistics',
      'Kestrel =?utf-8?b?UGFpZCBpbnZvaWNl?=', 'Kestrel\r\nX-Spam: no',
    ];
    for (const companyName of names) {
      const { draft } = await pipeline(context({ companyName }));
      assert.doesNotMatch(draft.subject, /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|=\?/, JSON.stringify(draft.subject));
      assert.match(draft.subject, /Kestrel/);
    }
  });

  it('ends without a name when there is no sender', async () => {
    const { draft } = await pipeline(context({ senderName: null }));
    assert.ok(draft.body.endsWith('\n\nBest regards,'));
  });

  it('is deterministic', async () => {
    const first = await pipeline(context());
    const second = await pipeline(context());
    assert.deepEqual(first, second);
  });

  describe('with a reviewer’s feedback', () => {
    it('makes it shorter than the version it replaces, commitments kept', async () => {
      const { draft: before, analysis, strategy } = await pipeline(context());
      const previousDraft = { version: 1, subject: before.subject, body: before.body };
      const draft = offlineEngine.write({ ...context(), analysis, strategy, feedback: 'Too long, make it shorter.', previousDraft }).output;
      assert.ok(wordCount(draft.body) <= wordCount(before.body) * 0.9, `${wordCount(draft.body)} vs ${wordCount(before.body)} words`);
      assert.match(draft.body, /security documentation/);
      assert.match(draft.body, /pilot plan/);
      assert.match(draft.body, /pilot/);
    });

    it('makes it more formal', async () => {
      const { draft } = await pipeline(context(), 'Please make it more formal.');
      assert.ok(draft.body.startsWith('Dear Ada Lovelace,'));
      assert.ok(draft.body.endsWith(`\n\n${signOff({ name: 'Grace Hopper', signature: null }, { closing: 'Kind regards,' })}`), draft.body);
      assert.doesNotMatch(`${draft.subject}\n${draft.body}`, /\b(I['’]m|I['’]ll|I['’]d|it['’]s|doesn['’]t|That['’]s)\b|\bHi\b|!/);
    });

    it('mentions what it is asked to mention', async () => {
      const { draft } = await pipeline(context(), 'Mention our SOC 2 report.');
      assert.match(draft.body, /we can share our SOC 2 report/);
      assert.doesNotMatch(draft.body, /As I said on the call/, 'DESIGN §12: no quoting the call back');
    });

    it('leaves out what it is asked to leave out', async () => {
      const { draft } = await pipeline(context(), "Don't mention cost.");
      assert.doesNotMatch(draft.body, /\bcost\b|\$4,000/i);
      assert.match(draft.body, /pilot plan/, 'the rest stays, commitments first');
    });

    it('changes the draft visibly when a request changes nothing', async () => {
      const { draft: before } = await pipeline(context());
      const { draft } = await pipeline(context(), 'Leave out the bit about licences.');
      assert.notEqual(draft.body, before.body);
    });

    it('changes the draft visibly for feedback it cannot act on', async () => {
      const { draft: before } = await pipeline(context());
      const { draft } = await pipeline(context(), 'Hmm, not quite there yet.');
      assert.notEqual(draft.subject, before.subject);
      assert.notEqual(draft.body, before.body);
      assert.match(draft.subject, /Kestrel Logistics/);
    });
  });
});
