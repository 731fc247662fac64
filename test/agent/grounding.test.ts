// The grounding guard: what a draft may claim about the lead's company, and the WRITER step that enforces it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PermanentStepError, StepAttemptError, type Engine, type EngineResult, type RunContext, type TokenUsage } from '../../src/agent/engine.ts';
import { checkGrounding, fitDraft, type Draft } from '../../src/agent/grounding.ts';
import { assertStepOutput } from '../../src/agent/output-check.ts';
import type { AnalysisOutput, Fact, ResearchOutput, StrategyOutput, WriterOutput } from '../../src/schemas/outputs.ts';
import { PIPELINE, type PipelineDeps } from '../../src/agent/pipeline.ts';
import { testCpu, testOfflineEngine } from '../support/cpu.ts';
import { cpuPerCall, timedCpu } from '../support/thread-cpu.ts';

const offlineEngine = testOfflineEngine();

const DISCOVERY_CALL = `[00:00:04] Grace: Thanks for making the time, Ada. How are things going with the sales team?
[00:00:11] Ada: Honestly, um, not great. My reps spend about 15 hours a week copying call notes into Salesforce.
[00:00:31] Ada: Yeah, and they're exhausted, half of them update the pipeline report on Sunday evenings.
[00:00:40] Ada: And the CRM is always out of date, so our forecast is basically a guess.
[00:00:58] Ada: We tried a virtual assistant agency but it cost us $4,000 a month and the notes were full of mistakes.
[00:01:19] Ada: We have budget approved for Q3. But honestly, price is my main worry after the agency.
[00:01:30] Ada: Security will also be a question, our IT team needs SOC 2 before anything touches customer data.
[00:01:47] Ada: If a pilot shows results with the Leeds team, I can sign off on a rollout to all 40 reps by the end of September.
[00:02:02] Grace: Great. How about a two-week pilot with the Leeds team?
[00:02:06] Ada: That sounds good. Can you send me the security documentation first?
[00:02:12] Grace: I'll send it over today, and I'll put together a pilot plan by Friday.
[00:02:20] Ada: Perfect, I'll loop in our CFO, Tom, for the kickoff.`;

const TRANSCRIPTS: Record<string, string> = {
  discovery: DISCOVERY_CALL,
  notes:
    'Call notes, 12 May. Ada said their team loses about two days a month reconciling invoices by hand. ' +
    'She is frustrated that the finance system is slow and that errors slip through to customers. ' +
    'They already use NetSuite and are worried about another integration. She would like to see a demo next week with her controller.',
  hesitant: [
    'Grace: A lot of teams tell me their reporting is a nightmare and completely manual.',
    'Ada: We are not convinced we need this, to be honest.',
    'Ada: It sounds too expensive for a team our size, and we already use HubSpot.',
    'Grace: Understood.',
  ].join('\n'),
  unnamed: [
    'Speaker 1: How do you handle renewals today? Who owns them?',
    'Speaker 2: Our renewals live in a spreadsheet and we miss about one in ten of them.',
    'Speaker 1: What does a missed renewal cost you? And how often does it happen?',
    'Speaker 2: It is painful, we lost two big customers last quarter, about €120k in ARR.',
  ].join('\n'),
  numbers: [
    'Rep: What does onboarding look like for you?',
    'Ada: We hire 25 drivers a month across Rotterdam and Antwerp, and onboarding takes 3 weeks per driver.',
    'Ada: Our dispatchers re-type every route from Excel into Kestrel Dispatch, it is a nightmare.',
    'Ada: We would love to start a trial in June if the numbers work; our COO Priya has the final say.',
    'Rep: I will send a proposal by Thursday.',
  ].join('\n'),
  empty: '   ',
};

const FACT_SETS: Record<string, Fact[]> = {
  concrete: [
    { text: 'Kestrel is a route-planning platform for regional carriers.', source: 'https://kestrel.example/' },
    { text: 'More than 340 carriers in 11 countries plan their deliveries with Kestrel.', source: 'https://kestrel.example/' },
    { text: 'We raised a Series B of €30 million in 2023, led by Northzone.', source: 'https://kestrel.example/about' },
  ],
  marketing: [
    { text: 'Cut your planning time in half with Kestrel Autopilot™.', source: 'https://kestrel.example/' },
    { text: 'Our team in Utrecht has built routing software since 2011.', source: 'https://kestrel.example/about' },
  ],
  none: [],
};

function researched(facts: Fact[], title: string | null = 'Kestrel Logistics | Route planning for regional carriers'): ResearchOutput {
  return {
    engine: 'offline',
    website: { url: 'https://www.kestrel.example', fetched: facts.length > 0, status: 200, error: null, title, description: null, summary: null },
    facts,
    sources: facts.length > 0 ? ['https://kestrel.example/'] : [],
  };
}

type WriteContext = RunContext & { research: ResearchOutput; analysis: AnalysisOutput; strategy: StrategyOutput };

interface ContextOptions {
  transcript?: string;
  facts?: Fact[];
  companyName?: string | null;
  leadName?: string;
  senderName?: string | null;
  title?: string | null;
}

function baseContext(options: ContextOptions = {}): RunContext & { research: ResearchOutput } {
  return {
    runId: '6a0c6c1e-5a3e-4b8e-9b57-2f1c1a7d9e10',
    lead: {
      id: 'lead-1',
      name: options.leadName ?? 'Ada Lovelace',
      email: 'ada@kestrel.example',
      companyName: options.companyName === undefined ? 'Kestrel Logistics' : options.companyName,
      companyWebsite: 'https://www.kestrel.example',
    },
    call: { id: 'call-1', title: 'Discovery', transcript: options.transcript ?? DISCOVERY_CALL, occurredAt: new Date('2025-03-03T10:00:00Z') },
    senderName: options.senderName === undefined ? 'Grace Hopper' : options.senderName,
    research: researched(options.facts ?? FACT_SETS.concrete!, options.title === undefined ? undefined : options.title),
  };
}

async function offlineContext(options: ContextOptions = {}): Promise<WriteContext> {
  const ctx = baseContext(options);
  const analysis = (await offlineEngine.analyse(ctx)).output;
  const strategy = (await offlineEngine.strategise({ ...ctx, analysis })).output;
  return { ...ctx, analysis, strategy };
}

const FEEDBACK = [
  null,
  'Too long, make it shorter.',
  'Please make it more formal.',
  'Make it more casual and friendly.',
  'Add more detail, make it longer.',
  'Mention our SOC 2 Type II report and the Zapier integration.',
  "Don't mention cost.",
  'Hmm, not quite there yet.',
];

describe('checkGrounding: the offline engine’s drafts', () => {
  it('always pass, over varied calls, research, companies, senders and feedback', async () => {
    let drafts = 0;
    for (const [callName, transcript] of Object.entries(TRANSCRIPTS)) {
      for (const [factsName, facts] of Object.entries(FACT_SETS)) {
        for (const variant of [
          {},
          { companyName: null },
          { companyName: null, title: null },
          { senderName: null, leadName: 'Dr. María-José O’Neill' },
          { companyName: 'Internationale Speditions- und Handelsgesellschaft Nordrhein-Westfalen GmbH' },
        ] satisfies ContextOptions[]) {
          const ctx = await offlineContext({ transcript, facts, ...variant });
          for (const feedback of FEEDBACK) {
            const draft = (await offlineEngine.write({ ...ctx, feedback })).output;
            const report = checkGrounding(draft, { ...ctx, feedback });
            const where = `${callName} / ${factsName} / ${JSON.stringify(variant)} / ${feedback}`;
            assert.deepEqual(report, { grounded: true, unsupported: [] }, `${where}\n${draft.subject}\n${draft.body}`);
            drafts++;
          }
        }
      }
    }
    assert.equal(drafts, Object.keys(TRANSCRIPTS).length * Object.keys(FACT_SETS).length * 5 * FEEDBACK.length);
  });
});

describe('checkGrounding: invented claims', () => {
  const draft = (body: string, subject = 'Following up: Kestrel Logistics'): Draft => ({ subject, body: `Hi Ada,\n\n${body}\n\nBest,\nGrace Hopper` });

  it('flags an invented team size and an invented office', async () => {
    const ctx = await offlineContext();
    const report = checkGrounding(draft('I know your 300-person team is growing fast. How is your Berlin office handling the rollout?'), ctx);
    assert.equal(report.grounded, false);
    assert.deepEqual(report.unsupported, [
      '“300” in “I know your 300-person team is growing fast.”',
      '“Berlin” in “How is your Berlin office handling the rollout?”',
    ]);
  });

  it('flags invented amounts, percentages, years and product names, and names each term', async () => {
    const ctx = await offlineContext();
    const cases: Array<[string, string]> = [
      ['Your $2 million budget for this year is impressive.', '$2 million'],
      ['I read that you cut delivery costs by 18% last year.', '18%'],
      ['Congratulations on ten years since you were founded in 2015.', '2015'],
      ['I saw you just launched Kestrel Fleet for larger carriers.', 'Fleet'],
      ['Many teams using Gong see faster ramp-up.', 'Gong'],
      ['Your recent partnership with DHL caught my eye.', 'DHL'],
      // The call has "40 reps" and "15 hours": the same numbers as money or a share are new claims.
      ['That would save you $40 per seat.', '$40'],
      ['That is 15% of the working week.', '15%'],
    ];
    for (const [sentence, term] of cases) {
      const report = checkGrounding(draft(sentence), ctx);
      assert.equal(report.grounded, false, sentence);
      assert.ok(report.unsupported.some((u) => u.startsWith(`“${term}”`) && u.includes(sentence)), `${sentence}: ${report.unsupported.join(' | ')}`);
    }
  });

  it('checks the subject line too', async () => {
    const ctx = await offlineContext();
    const report = checkGrounding(draft('Thanks for the call.', 'Kestrel Logistics and your Berlin expansion'), ctx);
    assert.deepEqual(report.unsupported, ['“Berlin” in “Kestrel Logistics and your Berlin expansion”']);
  });
});

describe('checkGrounding: supported claims', () => {
  it('passes what research, the analysis, the call, the lead and the sender support', async () => {
    const ctx = await offlineContext();
    const body = [
      'Hi Ada,',
      'Thanks again for our call on 3 March. You said your reps spend about 15 hours a week copying notes into Salesforce.',
      'I also saw that more than 340 carriers in 11 countries plan their deliveries with Kestrel, and that Northzone led your €30 million Series B in 2023.',
      'The agency cost you $4k a month, and you need SOC 2 before anything touches customer data.',
      'Would a two-week pilot with the Leeds team work, before a rollout to all 40 reps? I could loop in Tom as well.',
      'Best,\nGrace Hopper',
    ].join('\n\n');
    assert.deepEqual(checkGrounding({ subject: 'Kestrel Logistics: 15 hours a week on call notes', body }, ctx), { grounded: true, unsupported: [] });
  });

  it('passes meeting times, days, months, generic acronyms and a Title Case subject', async () => {
    const ctx = await offlineContext();
    const body = 'Hi Ada,\n\nCould we take 20 minutes on Thursday at 10am, or 14:30 in June? I can share the ROI numbers with your CFO.\n\nBest,\nGrace Hopper';
    const report = checkGrounding({ subject: 'Streamlining Your Weekly Pipeline Reporting at Kestrel', body }, ctx);
    assert.deepEqual(report, { grounded: true, unsupported: [] });
  });

  it('passes what the reviewer asked the draft to mention', async () => {
    const ctx = await offlineContext();
    const draft = { subject: 'Kestrel Logistics: our SOC 2 Type II report', body: 'Hi Ada,\n\nI also wanted to mention our Zapier integration.\n\nBest,\nGrace Hopper' };
    assert.equal(checkGrounding(draft, ctx).grounded, false);
    assert.equal(checkGrounding(draft, { ...ctx, feedback: 'Mention our SOC 2 Type II report and the Zapier integration.' }).grounded, true);
  });
});

// ===============================================================================================================
// Qualitative claims: what a draft says of the buyer's state, feelings, priorities, timing or of what was said

/** A call on the same subject that says nothing of the buyer's timing, workload, feelings or priorities. */
const BLAND_CALL = [
  'Grace: Thanks for making the time, Ada. I imagine the deadline is tight and your team is stretched.',
  'Ada: We plan routes for 40 drivers in Excel today.',
  'Ada: Our dispatchers re-type each route into the routing system.',
  'Ada: The team handles about 300 deliveries a day across the region.',
  'Ada: Could you send me the security documentation?',
  'Grace: I’ll send the security documentation today.',
  'Ada: Thanks, speak soon.',
].join('\n');

/** A call where the buyer says each of the things the claims below assert. */
const TELLING_CALL = [
  'Grace: Thanks for making the time, Ada.',
  'Ada: We’re up against a hard deadline in March for the new routing system.',
  'Ada: My team is completely swamped, we’re short two dispatchers.',
  'Ada: Fixing the dispatch errors is our top priority this quarter.',
  'Ada: The budget is approved already, the board signed off last week.',
  'Ada: I’m really keen on the pilot idea, it sounds exciting.',
  'Ada: Honestly, I’m worried about the integration with our ERP.',
  'Ada: The manual re-keying is a nightmare for the dispatchers.',
  'Ada: We’re hiring fast, we’re growing into two new regions.',
  'Ada: Cost is a real concern for us after last year.',
  'Ada: Could you also send two customer references?',
  'Ada: I’m frustrated, the routing tool we have keeps crashing.',
  'Ada: We’re ready to move ahead once the board sees the plan.',
  'Ada: Security is a big question for our IT team.',
  'Grace: I’ll send the security documentation today and a pilot plan by Friday.',
  'Ada: Great, so we agreed on a two-week pilot starting in February.',
].join('\n');

/** Claims about the buyer or about what was said, each backed by one line of TELLING_CALL and by none of BLAND_CALL. */
const QUALITATIVE_CLAIMS = [
  'I know the timing is tight.',
  'I know you’re under a lot of pressure right now.',
  'Your team is stretched.',
  'I know this is a priority for you.',
  'You mentioned the budget is approved.',
  'You were excited about the pilot.',
  'I know the integration with your ERP worries you.',
  'Your dispatchers find the manual re-keying a nightmare.',
  'Your company is growing fast.',
  'You asked for two customer references.',
  'As we agreed, the pilot starts in February.',
  'I know cost is a concern for you.',
  'You’re frustrated with the routing tool you have.',
  'You sounded ready to move ahead.',
  'I’ll keep this short since I know you’re busy.',
  'Your concerns about security make sense.',
];

/** Sentences of courtesy and of what we will do: no claim about the buyer, whatever the call says. */
const COURTESY = [
  'It was good to speak with you.',
  'Happy to help.',
  'Thanks for your time today.',
  'I hope you’re well.',
  'Looking forward to hearing from you.',
  'I’m excited to show you what the pilot could do.',
  'Let me know if you’re interested.',
  'Would a two-week pilot work for you?',
  'I’ll send it over quickly.',
  'Great to meet you and the team.',
  'Feel free to reach out with any questions.',
  'I’d be happy to walk your team through it.',
  'Is the timing tight on your side?',
  'If budget is a concern, a pilot keeps the first step small.',
  'Hope the rest of your week is less hectic.',
  'We know how hard it is to switch tools mid-quarter.',
];

describe('checkGrounding: qualitative claims', () => {
  const contextOf = (transcript: string) => offlineContext({ transcript });
  const draft = (sentence: string): Draft => ({
    subject: 'Following up: Kestrel Logistics', body: `Hi Ada,\n\n${sentence}\n\nBest,\nGrace Hopper`,
  });

  it('catches an invented “I know the timing is tight”, passes it when the buyer spoke of a deadline', async () => {
    const invented = draft('Thanks for the call. I know the timing is tight, so I will keep this short.');
    const report = checkGrounding(invented, await offlineContext());
    assert.deepEqual(report, {
      grounded: false,
      unsupported: [
        '“I know the timing is tight, so I will keep this short.”: '
          + 'a claim about the buyer that nothing they said backs',
      ],
    });
    const deadline = `${DISCOVERY_CALL}\n[00:02:30] Ada: And we're up against a hard deadline in March.`;
    assert.deepEqual(checkGrounding(invented, await contextOf(deadline)), { grounded: true, unsupported: [] });
  });

  it('does not take the rep’s own words for the buyer’s', async () => {
    const ctx = await contextOf(BLAND_CALL);
    for (const sentence of ['I know the timing is tight.', 'Your team is stretched.']) {
      assert.equal(checkGrounding(draft(sentence), ctx).grounded, false, sentence);
    }
  });

  it('tells the rep’s side as the shared transcript reader does: a "Speaker 1" who introduces themselves backs nothing', async () => {
    const call = [
      'Speaker 1: hi ada this is grace from kestrel thanks for taking the call i know the timing is tight for you',
      'Speaker 2: sure we plan routes by hand for forty trucks',
      'Speaker 1: got it i will send a short overview by friday',
    ].join('\n');
    assert.equal(checkGrounding(draft('I know the timing is tight.'), await contextOf(call)).grounded, false);
    const buyerSaidIt = call.replace('for forty trucks', 'for forty trucks and the timing is tight');
    assert.equal(checkGrounding(draft('I know the timing is tight.'), await contextOf(buyerSaidIt)).grounded, true);
  });

  it('flags each claim about the buyer or what was said on a call that never says it, not where it does', async () => {
    const [bland, telling] = [await contextOf(BLAND_CALL), await contextOf(TELLING_CALL)];
    for (const sentence of QUALITATIVE_CLAIMS) {
      const report = checkGrounding(draft(sentence), bland);
      assert.equal(report.unsupported.length, 1, `${sentence}: ${report.unsupported.join(' | ')}`);
      const why = /: a claim about (the buyer that nothing they said|what was said or agreed that the call does not)/;
      assert.match(report.unsupported[0]!, why);
      assert.ok(report.unsupported[0]!.includes(sentence.replace(/’/g, "'")), report.unsupported[0]);
      assert.deepEqual(checkGrounding(draft(sentence), telling), { grounded: true, unsupported: [] }, sentence);
    }
  });

  it('passes courtesy, questions, conditions and what we will do beside an invented claim, on any call', async () => {
    for (const transcript of [BLAND_CALL, DISCOVERY_CALL, '']) {
      const ctx = await contextOf(transcript);
      const report = checkGrounding(draft([...COURTESY, 'You were excited about the pilot.'].join(' ')), ctx);
      assert.deepEqual(report, {
        grounded: false,
        unsupported: ['“You were excited about the pilot.”: a claim about the buyer that nothing they said backs'],
      }, transcript);
    }
  });

  it('takes the analysis, the research and the reviewer’s feedback as backing too', async () => {
    const ctx = await contextOf(BLAND_CALL);
    const claim = draft('I know the timing is tight.');
    assert.equal(checkGrounding(claim, ctx).grounded, false);
    const analysis = { ...ctx.analysis, objections: [...ctx.analysis.objections, 'We have a hard deadline in March.'] };
    assert.equal(checkGrounding(claim, { ...ctx, analysis }).grounded, true, 'the analysis');
    const season = { text: 'Our busy season starts in March, with tight deadlines.', source: 'https://kestrel.example' };
    const research = { ...ctx.research, facts: [...ctx.research.facts, season] };
    assert.equal(checkGrounding(claim, { ...ctx, research }).grounded, true, 'the research');
    const feedback = 'Say that I know the timing is tight.';
    assert.equal(checkGrounding(claim, { ...ctx, feedback }).grounded, true, 'the feedback');
  });

  it('checks a claim on its own in a sentence that strings several together', async () => {
    const ctx = await contextOf(TELLING_CALL);
    const strung = 'You mentioned the budget is approved; your team is stretched, but the board is impatient.';
    const report = checkGrounding(draft(strung), ctx);
    assert.equal(report.grounded, true, report.unsupported.join(' | '));
    const invented = checkGrounding(draft('You mentioned the budget is approved; I know your CFO is excited.'), ctx);
    assert.equal(invented.grounded, false);
  });

  it('reads a megabyte of claims against a megabyte of call in time that grows linearly', () => {
    const base = baseContext();
    const claims =
      'I know the timing is tight and your team is stretched. You mentioned the budget is approved. You were excited. ';
    const line = 'Ada: our team is busy and the deadline is tight, and the budget is approved for it\n';
    const run = (size: number) => {
      const ctx = { ...base, call: { ...base.call, transcript: line.repeat(Math.ceil(size / line.length)) } };
      return checkGrounding({ subject: 'Hello', body: claims.repeat(Math.ceil(size / claims.length)) }, ctx);
    };
    const { value, ms } = timedCpu(() => run(1024 * 1024));
    assert.deepEqual(value.unsupported, ['“You were excited.”: a claim about the buyer that nothing they said backs']);
    assert.ok(ms < 60_000, `${Math.round(ms)} ms`);
    const ratios: number[] = [];
    while (ratios.length < 3 && !ratios.some((r) => r < 8)) {
      const shortMs = cpuPerCall(() => run(128 * 1024));
      ratios.push(cpuPerCall(() => run(512 * 1024)) / shortMs);
    }
    assert.ok(ratios.some((r) => r < 8), `time(4n) / time(n): ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
  });

  it('is checked on a hostile draft against a call full of words that look like claims, within a bound', () => {
    const base = baseContext();
    const transcript = Array.from({ length: 20_000 }, (_, i) => `Speaker${i % 7}: tight busy keen approved ${i}`)
      .join('\n');
    const body = 'Your team is stretched; you mentioned it; as we agreed; I know it is urgent for you; you love it. '
      .repeat(12_000);
    const ctx = { ...base, call: { ...base.call, transcript } };
    const { value, ms } = timedCpu(() => checkGrounding({ subject: 'Hello', body }, ctx));
    assert.ok(ms < 60_000, `${Math.round(ms)} ms`);
    assert.equal(value.grounded, false);
    const flagged = value.unsupported.some((e) => e.endsWith(': a claim about the buyer that nothing they said backs'));
    assert.ok(flagged, value.unsupported[0]);
  });
});

describe('fitDraft', () => {
  const usage: TokenUsage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

  it('leaves a draft within bounds as it is, whitespace tidied', () => {
    assert.deepEqual(fitDraft({ subject: '  Hello\nthere ', body: 'Hi Ada,\r\n\r\n\r\nThanks.  \n' }, usage), { subject: 'Hello there', body: 'Hi Ada,\n\nThanks.' });
  });

  it('makes a model’s subject one line: other line breaks and encoded words dropped, not refused', () => {
    const fit = (subject: string) => fitDraft({ subject, body: 'Hi Ada' }, usage).subject;
    assert.equal(fit('Hello\u2028Bcc: all@example.com'), 'Hello Bcc: all@example.com');
    assert.equal(fit('Hello\u0085there\u2029again'), 'Hello there again');
    assert.equal(fit('Your invoice =?utf-8?b?aXMgcGFpZA==?= today'), 'Your invoice today');
    assert.equal(fit('=?utf-8?q?Hello?= =?utf-8?q?there?= Ada'), 'Ada');
    assert.throws(() => fit('=?utf-8?b?SGVsbG8=?='), StepAttemptError, 'nothing left: the attempt fails, as if empty');
  });

  it('trims a small overrun at a word or a paragraph', () => {
    const subject = fitDraft({ subject: 'word '.repeat(20).trim(), body: 'x' }, usage).subject;
    assert.ok(subject.length <= 80, String(subject.length));
    assert.match(subject, /word…$/);
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}. ${'Lorem ipsum dolor sit amet. '.repeat(15).trim()}`);
    const body = fitDraft({ subject: 's', body: paragraphs.join('\n\n') }, usage).body;
    assert.ok(body.length <= 5000, String(body.length));
    assert.match(body, /amet\.$/);
  });

  it('fails the attempt, with its tokens, for an empty or far too long answer', () => {
    for (const draft of [{ subject: ' ', body: 'x' }, { subject: 's', body: '\n \n' }, { subject: 's'.repeat(200), body: 'x' }, { subject: 's', body: 'x'.repeat(9000) }]) {
      assert.throws(() => fitDraft(draft, usage), (error: unknown) => error instanceof StepAttemptError && error.usage === usage);
    }
  });
});

// ===============================================================================================================
// The WRITER step of the pipeline

const WRITER = PIPELINE.find((step) => step.node === 'WRITER')!;

/** An engine whose WRITER answers are scripted; every call's context is recorded. */
function scriptedWriter(answers: Array<Draft | Error>): Engine & { calls: WriteContext[] } {
  const calls: WriteContext[] = [];
  return {
    name: 'model',
    calls,
    analyse: offlineEngine.analyse,
    strategise: offlineEngine.strategise,
    async write(ctx): Promise<EngineResult<WriterOutput>> {
      calls.push(ctx);
      const answer = answers[calls.length - 1];
      if (!answer) throw new Error('no answer scripted');
      if (answer instanceof Error) throw answer;
      return { output: { engine: 'model', ...answer }, model: 'test-model', promptVersion: 'writer-v1', usage: { inputTokens: 1000, outputTokens: 200, totalTokens: 1200 } };
    },
  };
}

const deps = (engine: Engine): PipelineDeps => ({ engine, cpu: testCpu(), allowPrivateHosts: false });

/** A draft that passes every check: grounded, short, in its own words, and with the rep's promise of a pilot plan. */
const GROUNDED: Draft = {
  subject: 'Kestrel Logistics: 15 hours a week on call notes',
  body: 'Hi Ada,\n\nYour reps lose about 15 hours a week to call notes in Salesforce.\n\n'
    + 'As promised, I will put together a pilot plan by Friday. '
    + 'Would a two-week pilot with the Leeds team work for you?\n\nBest,\nGrace Hopper',
};
const INVENTED: Draft = { ...GROUNDED, body: GROUNDED.body.replace('Would a', 'Your Berlin office could join too. Would a') };

describe('the WRITER step with the grounding guard', () => {
  it('keeps a grounded first draft, with one call', async () => {
    const ctx = await offlineContext();
    const engine = scriptedWriter([GROUNDED]);
    const result = await WRITER.run(ctx, deps(engine));
    assert.equal(engine.calls.length, 1);
    assert.deepEqual(result.output, {
      engine: 'model', ...GROUNDED,
      grounding: { grounded: true, rewritten: false, unsupported: [] }, checks: { passed: true, failed: [] },
    });
    assert.deepEqual(result.usage, { inputTokens: 1000, outputTokens: 200, totalTokens: 1200 });
    assertStepOutput('WRITER', result.output);
  });

  it('rewrites an invented claim once, with feedback naming it and the reviewer’s feedback kept', async () => {
    const ctx = { ...(await offlineContext()), feedback: 'Please keep it short.' };
    const engine = scriptedWriter([INVENTED, GROUNDED]);
    const result = await WRITER.run(ctx, deps(engine));
    assert.equal(engine.calls.length, 2);
    const feedback = engine.calls[1]!.feedback ?? '';
    assert.match(feedback, /“Berlin” in “Your Berlin office could join too\.”/);
    assert.match(feedback, /Please keep it short\./);
    assert.deepEqual(result.output, {
      engine: 'model', ...GROUNDED,
      grounding: { grounded: true, rewritten: true, unsupported: [] }, checks: { passed: true, failed: [] },
    });
    assert.deepEqual(result.usage, { inputTokens: 2000, outputTokens: 400, totalTokens: 2400 });
    assert.equal(result.model, 'test-model');
    assert.equal(result.promptVersion, 'writer-v1');
    assertStepOutput('WRITER', result.output);
  });

  it('rewrites an invented claim about the buyer once, with feedback naming it', async () => {
    const ctx = await offlineContext();
    const tight: Draft = { ...GROUNDED, body: GROUNDED.body.replace('Would a', 'I know the timing is tight. Would a') };
    const engine = scriptedWriter([tight, GROUNDED]);
    const result = await WRITER.run(ctx, deps(engine));
    assert.equal(engine.calls.length, 2);
    const claim = '- “I know the timing is tight.”: a claim about the buyer that nothing they said backs';
    assert.ok((engine.calls[1]!.feedback ?? '').includes(claim), engine.calls[1]!.feedback ?? '');
    assert.equal((result.output as WriterOutput).body, GROUNDED.body);
    assert.deepEqual((result.output as WriterOutput).grounding, { grounded: true, rewritten: true, unsupported: [] });
  });

  it('keeps the second draft, flagged, when it still invents', async () => {
    const ctx = await offlineContext();
    const stubborn = { ...INVENTED, subject: 'Kestrel Logistics and your 300-person team' };
    const engine = scriptedWriter([INVENTED, stubborn]);
    const result = await WRITER.run(ctx, deps(engine));
    assert.equal(engine.calls.length, 2, 'one rewrite only');
    const output = result.output as WriterOutput;
    assert.equal(output.subject, stubborn.subject);
    assert.deepEqual(output.grounding, {
      grounded: false,
      rewritten: true,
      unsupported: ['“300” in “Kestrel Logistics and your 300-person team”', '“Berlin” in “Your Berlin office could join too.”'],
    });
    assert.deepEqual(result.usage, { inputTokens: 2000, outputTokens: 400, totalTokens: 2400 });
    assertStepOutput('WRITER', result.output);
  });

  it('flags the first draft instead of rewriting when the token budget is spent', async () => {
    const ctx = { ...(await offlineContext()), tokensLeft: 1000 };
    const engine = scriptedWriter([INVENTED, GROUNDED]);
    const result = await WRITER.run(ctx, deps(engine));
    assert.equal(engine.calls.length, 1);
    assert.deepEqual((result.output as WriterOutput).grounding?.rewritten, false);
    assert.deepEqual((result.output as WriterOutput).grounding?.grounded, false);
  });

  it('passes the remaining budget to the rewrite', async () => {
    const ctx = { ...(await offlineContext()), tokensLeft: 5000 };
    const engine = scriptedWriter([INVENTED, GROUNDED]);
    await WRITER.run(ctx, deps(engine));
    assert.equal(engine.calls[1]!.tokensLeft, 3800);
  });

  it('counts the first call’s tokens when the rewrite fails', async () => {
    const ctx = await offlineContext();
    await assert.rejects(WRITER.run(ctx, deps(scriptedWriter([INVENTED, new Error('the model endpoint answered 503 Service Unavailable')]))), (error: unknown) => {
      assert.ok(error instanceof StepAttemptError);
      assert.equal(error.message, 'the model endpoint answered 503 Service Unavailable');
      assert.deepEqual(error.usage, { inputTokens: 1000, outputTokens: 200, totalTokens: 1200 });
      return true;
    });
    await assert.rejects(WRITER.run(ctx, deps(scriptedWriter([INVENTED, new PermanentStepError('the model endpoint answered 401 Unauthorized')]))), (error: unknown) => {
      assert.ok(error instanceof PermanentStepError);
      assert.deepEqual(error.usage, { inputTokens: 1000, outputTokens: 200, totalTokens: 1200 });
      return true;
    });
  });

  it('trims an overlong subject from any engine', async () => {
    const ctx = await offlineContext();
    const long = { ...GROUNDED, subject: `${GROUNDED.subject} and the two-week pilot with the Leeds team we discussed` };
    const result = await WRITER.run(ctx, deps(scriptedWriter([long])));
    assert.ok((result.output as WriterOutput).subject.length <= 80);
    assertStepOutput('WRITER', result.output);
  });

  it('records the check on the offline engine’s draft', async () => {
    const ctx = await offlineContext();
    const result = await WRITER.run(ctx, deps(offlineEngine));
    assert.deepEqual((result.output as WriterOutput).grounding, { grounded: true, rewritten: false, unsupported: [] });
    assert.equal(result.usage, null);
    assertStepOutput('WRITER', result.output);
  });
});
