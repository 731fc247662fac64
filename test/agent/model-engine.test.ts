// The model engine through the real AI SDK client, over loopback, against a scripted OpenAI-compatible endpoint.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { PermanentStepError, StepAttemptError, type RunContext } from '../../src/agent/engine.ts';
import { assertStepOutput } from '../../src/agent/output-check.ts';
import { PIPELINE } from '../../src/agent/pipeline.ts';
import { quotesOf } from '../../src/agent/prompts/brief.ts';
import { testCpu } from '../support/cpu.ts';
import { createCpuPool } from '../../src/cpu/pool.ts';
import { ModelEndpointError } from '../../src/agent/engine.ts';
import { createModelEngine, MAX_ANSWER_BYTES, type ModelEngineOptions } from '../../src/agent/engines/model.ts';
import type {
  AnalysisOutput, KeyFacts, ResearchOutput, StrategyOutput, WriterOutput,
} from '../../src/schemas/outputs.ts';
import { chat, hang, messageText, rateLimited, startOpenAIServer, status, type OpenAIServer } from '../support/openai-server.ts';

const API_KEY = 'sk-test-Zq8v1LmN4pRt7XyK2wBc';

const RESEARCH: ResearchOutput = {
  engine: 'offline',
  website: {
    url: 'https://www.kestrel.example', fetched: true, status: 200, error: null,
    title: 'Kestrel Logistics | Route planning for regional carriers', description: 'Route planning for regional carriers.', summary: null,
  },
  facts: [
    { text: 'More than 340 carriers in 11 countries plan their deliveries with Kestrel.', source: 'https://kestrel.example/' },
    { text: 'We raised a Series B of €30 million in 2023, led by Northzone.', source: 'https://kestrel.example/about' },
  ],
  sources: ['https://kestrel.example/', 'https://kestrel.example/about'],
};

const TRANSCRIPT = `Grace: How are things going with the sales team?
Ada: My reps spend about 15 hours a week copying call notes into Salesforce.
Ada: Price is my main worry. If a pilot shows results with the Leeds team, I can sign off on a rollout.
Grace: How about a two-week pilot?`;

const ANALYSIS = {
  painPoints: ['My reps spend about 15 hours a week copying call notes into Salesforce.'],
  objections: ['Price is my main worry.'],
  buyingSignals: ['If a pilot shows results with the Leeds team, I can sign off on a rollout.'],
  nextSteps: ['Grace will send a pilot plan.'],
  sentiment: 'positive',
} as const;

const STRATEGY = {
  angle: 'Lead with the 15 hours a week spent copying call notes, then propose the two-week pilot.',
  valuePropositions: ['Give the reps back the hours spent copying notes', 'Prove the value in a small pilot first'],
  callToAction: 'Would a two-week pilot with the Leeds team work for you?',
  tone: 'warm and direct',
};

const DRAFT = {
  subject: 'Kestrel Logistics: the 15 hours a week of call notes',
  body: 'Hi Ada,\n\nThanks for the call. You mentioned your reps spend about 15 hours a week copying call notes into Salesforce.\n\nWould a two-week pilot with the Leeds team work for you?\n\nBest,\nGrace Hopper',
};

function context(overrides: Partial<RunContext> = {}): RunContext & { research: ResearchOutput; analysis: AnalysisOutput; strategy: StrategyOutput } {
  return {
    runId: '6a0c6c1e-5a3e-4b8e-9b57-2f1c1a7d9e10',
    lead: { id: 'lead-1', name: 'Ada Lovelace', email: 'ada@kestrel.example', companyName: 'Kestrel Logistics', companyWebsite: 'https://www.kestrel.example' },
    call: { id: 'call-1', title: 'Discovery', transcript: TRANSCRIPT, occurredAt: new Date('2025-03-03T10:00:00Z') },
    senderName: 'Grace Hopper',
    research: RESEARCH,
    analysis: { engine: 'model', ...ANALYSIS, painPoints: [...ANALYSIS.painPoints], objections: [...ANALYSIS.objections], buyingSignals: [...ANALYSIS.buyingSignals], nextSteps: [...ANALYSIS.nextSteps] },
    strategy: { engine: 'model', ...STRATEGY },
    ...overrides,
  };
}

let server: OpenAIServer;
beforeEach(async () => { server = await startOpenAIServer(); });
afterEach(async () => { await server.close(); });

function engine(options: Partial<ModelEngineOptions> = {}) {
  return createModelEngine({ baseUrl: server.baseUrl, apiKey: API_KEY, model: 'test-model', ...options });
}

/** The rejection of a promise, asserted to be one. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Error, `not an Error: ${String(error)}`);
    assert.doesNotMatch(error.message, new RegExp(API_KEY), 'the API key leaked into an error message');
    assert.doesNotMatch(error.message, /Zq8v1LmN/, 'part of the API key leaked into an error message');
    return error;
  }
  assert.fail('expected the call to fail');
}

function assertRetryable(error: Error): void {
  assert.ok(!(error instanceof PermanentStepError), `${error.name} should be retryable: ${error.message}`);
}

describe('model engine: a full sequence', () => {
  it('runs ANALYSIS, STRATEGY and WRITER with structured output, and reports model, prompt version and usage', async () => {
    server.reply(
      chat(ANALYSIS, { usage: { prompt_tokens: 812, completion_tokens: 95 }, model: 'test-model-2025-01' }),
      chat(STRATEGY, { usage: { prompt_tokens: 640, completion_tokens: 80 }, model: 'test-model-2025-01' }),
      chat(DRAFT, { usage: { prompt_tokens: 900, completion_tokens: 150 } }),
    );
    const model = engine();
    assert.equal(model.name, 'model');
    const ctx = context();

    const analysis = await model.analyse(ctx);
    assert.deepEqual(analysis.output, { ...ANALYSIS, engine: 'model' });
    assert.equal(analysis.model, 'test-model-2025-01', 'the model id the endpoint answered with');
    assert.equal(analysis.promptVersion, 'analysis-v2');
    assert.deepEqual(analysis.usage, { inputTokens: 812, outputTokens: 95, totalTokens: 907 });

    const strategy = await model.strategise({ ...ctx, analysis: analysis.output });
    assert.deepEqual(strategy.output, { ...STRATEGY, engine: 'model' });
    assert.equal(strategy.promptVersion, 'strategy-v1');
    assert.deepEqual(strategy.usage, { inputTokens: 640, outputTokens: 80, totalTokens: 720 });

    const draft = await model.write({ ...ctx, analysis: analysis.output, strategy: strategy.output });
    assert.deepEqual(draft.output, { ...DRAFT, engine: 'model' });
    assert.equal(draft.model, 'test-model');
    assert.equal(draft.promptVersion, 'writer-v3');
    assert.deepEqual(draft.usage, { inputTokens: 900, outputTokens: 150, totalTokens: 1050 });

    assert.equal(server.requests.length, 3);
    const [a, s, w] = server.requests;
    for (const request of [a!, s!, w!]) {
      assert.equal(request.path, '/v1/chat/completions');
      assert.equal(request.body.model, 'test-model');
      assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
      assert.equal(request.body.response_format.type, 'json_schema');
      assert.equal(request.body.response_format.json_schema.strict, true);
      const schema = request.body.response_format.json_schema.schema;
      assert.equal(schema.additionalProperties, false);
      assert.ok(!('engine' in schema.properties), 'the model is not asked for the engine');
      assert.deepEqual(schema.required, Object.keys(schema.properties));
    }
    assert.deepEqual(Object.keys(a!.body.response_format.json_schema.schema.properties), ['painPoints', 'objections', 'buyingSignals', 'nextSteps', 'sentiment', 'facts']);
    // The facts of the call, asked for as strictly as the rest: every field required, nothing else allowed.
    const facts = a!.body.response_format.json_schema.schema.properties.facts;
    assert.deepEqual(facts.required, ['figures', 'dates', 'people', 'tools', 'budgetAndTiming', 'commitments']);
    assert.equal(facts.additionalProperties, false);
    assert.deepEqual(facts.properties.people.items.required, ['name', 'role', 'side']);
    assert.deepEqual(facts.properties.people.items.properties.side.enum, ['prospect', 'rep']);
    assert.deepEqual(a!.body.response_format.json_schema.schema.properties.sentiment.enum, ['positive', 'neutral', 'negative']);
    assert.deepEqual(Object.keys(w!.body.response_format.json_schema.schema.properties), ['subject', 'body']);

    assert.match(messageText(a!, 'system'), /Quote the prospect's own words/);
    assert.match(messageText(a!, 'user'), /15 hours a week copying call notes into Salesforce/);
    assert.match(messageText(s!, 'system'), /exactly ONE angle/);
    assert.match(messageText(s!, 'user'), /Price is my main worry/);
    assert.match(messageText(w!, 'system'), /State nothing about the prospect's company/);
    assert.match(messageText(w!, 'user'), /Greet Ada by first name/);
    assert.match(messageText(w!, 'user'), /Sign as Grace Hopper/);
  });

  it('puts the research facts and the reviewer’s feedback in the writer prompt', async () => {
    server.reply(chat(DRAFT));
    await engine().write(context({ feedback: 'Make it shorter and do not mention pricing.' }));
    const user = messageText(server.requests[0]!, 'user');
    for (const fact of RESEARCH.facts) assert.ok(user.includes(fact.text), fact.text);
    assert.match(user, /<feedback>\nMake it shorter and do not mention pricing\.\n<\/feedback>/);
    assert.match(user, /Angle: Lead with the 15 hours a week/);
  });

  it('gives the writer the facts of the call, the sender’s signature, the feedback as instructions and the draft it replaces', async () => {
    server.reply(chat(DRAFT));
    const facts = {
      figures: [{ value: '15 hours', about: 'My reps spend about 15 hours a week copying call notes into Salesforce.' }],
      dates: ['by the end of September'],
      people: [{ name: 'Tom', role: 'CFO', side: 'prospect' as const }],
      tools: ['Salesforce'],
      budgetAndTiming: ['We have budget approved for Q3.'],
      commitments: ['I’ll put together a pilot plan by Friday'],
    };
    const base = context();
    await engine().write({
      ...base,
      analysis: { ...base.analysis, facts },
      sender: { name: 'Grace Hopper', signature: 'Grace Hopper\nHead of Sales' },
      feedback: 'Keep it under 100 words and more formal.',
      previousDraft: { version: 1, subject: 'Kestrel Logistics: call notes', body: 'Hi Ada,\n\nThe first version.\n\nBest regards,\nGrace Hopper' },
    });
    const system = messageText(server.requests[0]!, 'system');
    const user = messageText(server.requests[0]!, 'user');
    assert.match(system, /Carry the facts of the call/);
    assert.match(system, /Deliver on every promise the salesperson made/);
    assert.match(system, /Never quote or paraphrase the feedback/);
    assert.match(system, /a word limit, counted over the body without the greeting and the sign-off, is a hard limit/);
    assert.match(user, /Facts of the call:/);
    assert.match(user, /- 15 hours: “My reps spend about 15 hours a week/);
    assert.match(user, /- Tom, CFO \(the prospect’s side\)/);
    assert.match(user, /Tools and systems in use:\n- Salesforce/);
    assert.match(user, /Budget and timing:\n- We have budget approved for Q3\./);
    assert.match(user, /What the salesperson promised on the call \(put each in the e-mail as a commitment/);
    assert.match(user, /with its date\):\n- I’ll put together a pilot plan by Friday/);
    assert.match(user, /<signature>\nGrace Hopper\nHead of Sales\n<\/signature>/);
    assert.match(user, /Sign off with the signature above\./);
    assert.match(user, /instructions for the new version: follow them, do not quote them:\n<feedback>\nKeep it under 100 words and more formal\.\n<\/feedback>/);
    assert.match(user, /<previous_draft>\nSubject: Kestrel Logistics: call notes\n\nHi Ada,\n\nThe first version\./);

    // Without feedback, a regeneration asks for a different version.
    server.reply(chat(DRAFT));
    await engine().write({ ...base, previousDraft: { version: 2, subject: 'S', body: 'B' } });
    assert.match(messageText(server.requests[1]!, 'user'), /no instructions: write a clearly different version/);
    assert.doesNotMatch(messageText(server.requests[1]!, 'user'), /<feedback>/);
  });

  it('keeps a fact-free prompt honest when the website could not be read, and sends no key when there is none', async () => {
    server.reply(chat(DRAFT));
    const research: ResearchOutput = { ...RESEARCH, website: { ...RESEARCH.website, fetched: false, error: 'timed out', title: null, description: null }, facts: [], sources: [] };
    await engine({ apiKey: null }).write(context({ research, senderName: null }));
    const request = server.requests[0]!;
    assert.equal(request.headers.authorization, undefined);
    assert.match(messageText(request, 'user'), /There are no research facts/);
    assert.match(messageText(request, 'user'), /No sender name is known/);
  });

  it('signs the draft as every engine does (src/agent/sign-off.ts), whatever sign-off the model wrote', async () => {
    const body = 'Hi Ada,\n\nThanks for the call.\n\nWould a two-week pilot with the Leeds team work for you?';
    server.reply(
      chat({ subject: DRAFT.subject, body: `${body}\n\nKind regards,\nGrace Hopper\nGrace Hopper\nHead of Sales` }),
      chat({ subject: DRAFT.subject, body }),
    );
    const signed = context({ sender: { name: 'Grace Hopper', signature: 'Grace Hopper\nHead of Sales' } });
    const first = await engine().write(signed);
    assert.equal(first.output.body, `${body}\n\nKind regards,\n-- \nGrace Hopper\nHead of Sales`);
    const second = await engine().write(context({ sender: { name: 'Grace Hopper', signature: null } }));
    assert.equal(second.output.body, `${body}\n\nBest regards,\nGrace Hopper`);
  });
});

// ===============================================================================================================
// The same brief as the offline writer, and the same checks (DESIGN §12)

const FACTS: KeyFacts = {
  figures: [{ value: '15 hours', about: 'My reps spend about 15 hours a week copying call notes into Salesforce.' }],
  dates: [],
  people: [],
  tools: ['Salesforce'],
  budgetAndTiming: [],
  commitments: ['I’ll put together a pilot plan by Friday'],
};

/** The run's context with the facts of the call, its commitment and its agreed next step. */
function briefed(overrides: Partial<RunContext> = {}) {
  const base = context(overrides);
  const nextSteps = ['Grace sends the pilot plan by Friday; Ada books the kickoff.'];
  return { ...base, analysis: { ...base.analysis, facts: FACTS, nextSteps } };
}

/** A draft that passes every check: short, in its own words, grounded, with the rep's commitment and the next step. */
const GOOD = {
  subject: 'Kestrel Logistics: the two-week pilot',
  body: 'Hi Ada,\n\nThanks for the call. Your reps lose about 15 hours a week to call notes in Salesforce, '
    + 'time that belongs to selling.\n\nAs promised, I will put together a pilot plan by Friday. '
    + 'Would a two-week pilot with the Leeds team work for you?\n\nBest,\nGrace Hopper',
};
/** GOOD with 280 more words: over the limit of a first follow-up, and nothing else wrong. */
const LONG = {
  ...GOOD,
  body: GOOD.body.replace(
    '\n\nBest,',
    `\n\n${'We can look at how the pilot fits the way the Leeds team works and what it shows. '.repeat(16)}`.trimEnd()
      + '\n\nBest,',
  ),
};
/** GOOD with a speaker's label from the transcript at the start of a line. */
const LEAKING = { ...GOOD, body: GOOD.body.replace('As promised,', 'Ada: the pilot comes first.\n\nAs promised,') };
/** GOOD without the rep's commitment. */
const FORGETFUL = { ...GOOD, body: GOOD.body.replace('As promised, I will put together a pilot plan by Friday. ', '') };

/** One turn of a call in each format a transcript comes in, repeated to make a hostile one. */
const HOSTILE_UNITS: Record<string, string> = {
  labelled: 'Ada: we ship pallets every day across the region and it takes two days\n',
  'rep-prospect': 'PROSPECT: we ship pallets every day across the region\nREP: understood\n',
  'speaker-n': 'Speaker 2: um we ship uh pallets every day [inaudible] across the region\n',
  webvtt: '1\n00:00:01.000 --> 00:00:04.000\n<v Ada Lovelace>We ship pallets every day.</v>\n\n',
  srt: '1\n00:00:01,000 --> 00:00:04,000\nAda: We ship pallets every day.\n\n',
  otter: 'Ada Lovelace  0:42\nwe ship pallets every day across the region\n\n',
  timestamped: '[00:03:12] Ada Lovelace (Kestrel): We ship pallets every day.\n',
  oneLine: 'we ship pallets every day across the region ',
};

const WRITER = PIPELINE.find((step) => step.node === 'WRITER')!;
/** The context with its quotes' lines looked up in the CPU pool, as the WRITER step does before the model writes. */
const lined = async <T extends RunContext & { analysis: NonNullable<RunContext['analysis']> }>(ctx: T): Promise<T> =>
  ({ ...ctx, quoteLines: await testCpu().run('quoteLines', { transcript: ctx.call.transcript, quotes: quotesOf(ctx.analysis) }) });
const writeChecked = (ctx: ReturnType<typeof briefed>) =>
  WRITER.run(ctx, { engine: engine(), cpu: testCpu(), allowPrivateHosts: false });

describe('model engine: the brief of the draft', () => {
  it('gives the writer the call’s facts with their lines, the commitments with their dates, the next step, the limits, '
    + 'the feedback as instructions and the latest version to revise', async () => {
    server.reply(chat(GOOD));
    await engine().write(await lined({
      ...briefed(),
      feedback: 'Keep it under 100 words, make it more formal, lead with the pilot and drop the pricing talk.',
      previousDraft: {
        version: 3,
        subject: 'Kestrel Logistics: the pilot',
        body: 'Hi Ada,\n\nGrace edited this version herself.\n\nBest,\nGrace Hopper',
      },
    }));
    const user = messageText(server.requests[0]!, 'user');
    const system = messageText(server.requests[0]!, 'system');
    const quote = 'My reps spend about 15 hours a week copying call notes into Salesforce. (line 2)';
    assert.ok(user.includes(`Pain points (the prospect’s words):\n- ${quote}`), user);
    assert.ok(user.includes(`- 15 hours: “${quote}”`));
    assert.match(user, /Objections:\n- Price is my main worry\. \(line 3\)/);
    assert.match(user, /with its date\):\n- I’ll put together a pilot plan by Friday \(when: by Friday\)/);
    assert.ok(user.includes(
      'The next steps agreed on the call (end with the first as the call to action: who does what, by when):\n'
        + '- Grace sends the pilot plan by Friday; Ada books the kickoff.',
    ));
    assert.match(user, /- The body is at most 100 words, not counting the greeting line and the sign-off\./);
    assert.ok(user.includes('- No speaker labels ("Ada:"), timestamps, transcript markup such as [inaudible], or'));
    assert.match(user, /- No run of 8 or more words copied from the transcript, even with the pronouns changed/);
    assert.match(user, /- No bullet list that repeats the call back\./);
    assert.ok(user.includes([
      'Read as instructions:',
      '- Keep the body to at most 100 words (greeting and sign-off not counted), with every commitment and the next '
        + 'step still in.',
      '- More formal: no contractions, no “Hi” (greet with “Dear …”), and no exclamation marks.',
      '- Open the e-mail with the pilot.',
      '- Leave out the pricing talk entirely.',
    ].join('\n')), user);
    assert.ok(user.includes([
      'The latest version of the draft (version 3, a person’s edit included), to revise:',
      '<previous_draft>',
      'Subject: Kestrel Logistics: the pilot\n\nHi Ada,\n\nGrace edited this version herself.',
    ].join('\n')));
    assert.match(system, /at most 150 words not counting the greeting line and the sign-off/);
    assert.match(system, /no run of 8 or more words copied from the transcript/);
    assert.match(system, /Say nothing of the prospect's feelings, priorities, timing, pressure or situation/);
    assert.match(system, /End with the agreed next step as the call to action: who does what, by when/);
  });

  it('looks up a bounded number of quotes in a long transcript, however many a model’s analysis lists', async () => {
    server.reply(chat(GOOD));
    const base = briefed();
    const transcript = `${'Ada: we ship pallets every day across the region\n'.repeat(4000)}Ada: the last line says something new`;
    const painPoints = Array.from({ length: 20_000 }, (_, i) => `We ship pallets every day across the region, ${i}`);
    await engine().write(await lined({ ...base, call: { ...base.call, transcript }, analysis: { ...base.analysis, painPoints } }));
    const user = messageText(server.requests[0]!, 'user');
    assert.match(user, /- We ship pallets every day across the region, 0 \(line 1\)\n/);
    assert.equal(user.split(' (line ').length - 1, 48, 'the first 48 quotes are looked up, no more');
    assert.match(user, /- We ship pallets every day across the region, 19999\n/);
  });

  it('the WRITER step looks the quotes up in the CPU pool before the model writes', async () => {
    server.reply(chat(GOOD));
    await writeChecked(briefed());
    const user = messageText(server.requests[0]!, 'user');
    assert.ok(user.includes('- My reps spend about 15 hours a week copying call notes into Salesforce. (line 2)'), user);
  });

  it('looks quotes up in a hostile 1 MiB transcript of each format within the pool’s budget, in linear time', async () => {
    const pool = createCpuPool({ budgetMs: 20_000, threads: 1 });
    try {
      const quotes = Array.from({ length: 60 }, (_, i) => `nobody said these words at all ${i}`).concat('the last line says something new');
      for (const [format, unit] of Object.entries(HOSTILE_UNITS)) {
        const timed = async (bytes: number) => {
          const transcript = `${format === 'webvtt' ? 'WEBVTT\n\n' : ''}${unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes)}\nAda: the last line says something new`;
          const started = performance.now();
          const lines = await pool.run('quoteLines', { transcript, quotes });
          return { ms: performance.now() - started, lines };
        };
        await timed(1 << 16);
        // The best of three turns of each size: other processes on the cores only ever add time.
        let [quarter, whole] = [Infinity, Infinity];
        for (let turn = 0; turn < 3; turn++) {
          quarter = Math.min(quarter, (await timed(1 << 18)).ms);
          const read = await timed(1 << 20);
          assert.ok(read.lines.size <= 1, format);
          whole = Math.min(whole, read.ms);
          if (whole < Math.max(8 * quarter, 400)) break;
        }
        assert.ok(whole < Math.max(8 * quarter, 400), `${format}: ${Math.round(quarter)} ms for 256 KiB, ${Math.round(whole)} ms for 1 MiB`);
      }
    } finally {
      await pool.close();
    }
  });

  it('asks a “not now” call for a short, gracious note, and for a next step when none was agreed', async () => {
    server.reply(chat(GOOD), chat(GOOD));
    const base = briefed();
    const objections = ['Not right now, we will revisit this next year.'];
    await engine().write({ ...base, analysis: { ...base.analysis, sentiment: 'neutral', objections } });
    const notNow = messageText(server.requests[0]!, 'user');
    assert.match(notNow, /- The body is at most 80 words/);
    assert.ok(notNow.includes(
      'The prospect said not now: write a short, gracious note (at most 80 words) that thanks them, leaves the door '
        + 'open '
        + 'and asks for nothing they declined.',
    ));
    await engine().write({ ...base, analysis: { ...base.analysis, nextSteps: [] } });
    const none = messageText(server.requests[1]!, 'user');
    assert.ok(none.includes(
      'No next step was agreed on the call: end by proposing one that fits it, such as: '
        + 'Would a two-week pilot with the Leeds team work for you?',
    ));
    assert.doesNotMatch(none, /not now/);
  });
});

describe('model engine: a draft held to the checks', () => {
  const usage = (prompt_tokens: number, completion_tokens: number) => ({ usage: { prompt_tokens, completion_tokens } });

  it('keeps a draft that passes them, after one call, with the checks recorded', async () => {
    server.reply(chat(GOOD, usage(900, 120)));
    const result = await writeChecked(briefed());
    assert.equal(server.requests.length, 1);
    assert.deepEqual((result.output as WriterOutput).checks, { passed: true, failed: [] });
    assert.deepEqual((result.output as WriterOutput).grounding, { grounded: true, rewritten: false, unsupported: [] });
  });

  const failures: Array<[string, typeof GOOD, RegExp, RegExp]> = [
    [
      '300 words', LONG,
      /- word limit: the body has \d{3} words; at most 150 \(greeting and signature not counted\)\./,
      /Cut the body to at most 150 words/,
    ],
    ['a speaker label', LEAKING, /- leak: the speaker label “Ada:”\./, /No speaker labels, timestamps, transcript/],
    [
      'a dropped commitment', FORGETFUL,
      /- commitment missing: “I’ll put together a pilot plan by Friday”\./,
      /as a commitment of the salesperson, with its date/,
    ],
  ];
  for (const [what, first, failure, instruction] of failures) {
    it(`rewrites a first draft with ${what} once, naming the failure, and keeps the second; both calls’ tokens counted`,
      async () => {
      server.reply(chat(first, usage(900, 300)), chat(GOOD, usage(1000, 120)));
      const result = await writeChecked({ ...briefed(), feedback: 'Keep it warm.' });
      assert.equal(server.requests.length, 2);
      const second = messageText(server.requests[1]!, 'user');
      assert.match(second, /The previous draft failed these checks; write the e-mail again so that it passes them:/);
      assert.match(second, failure);
      assert.match(second, instruction);
      assert.match(second, /The reviewer’s feedback on the earlier draft still applies:\nKeep it warm\./);
      assert.match(second, /I’ll put together a pilot plan by Friday \(when: by Friday\)/, 'the same brief');
      const output = result.output as WriterOutput;
      assert.deepEqual({ subject: output.subject, body: output.body }, GOOD);
      assert.deepEqual(output.checks, { passed: true, failed: [] });
      assert.equal(output.grounding?.rewritten, true);
      assert.deepEqual(result.usage, { inputTokens: 1900, outputTokens: 420, totalTokens: 2320 });
      assertStepOutput('WRITER', result.output);
    });
  }

  it('keeps a second draft that fails too, with its failed checks named, after two calls', async () => {
    const promise = 'As promised, I will put together a pilot plan by Friday. ';
    const stillWrong = { ...FORGETFUL, body: LEAKING.body.replace(promise, '') };
    server.reply(chat(LONG, usage(900, 300)), chat(stillWrong, usage(1000, 120)));
    const result = await writeChecked(briefed());
    assert.equal(server.requests.length, 2, 'one rewrite only');
    const output = result.output as WriterOutput;
    assert.deepEqual(output.checks, {
      passed: false,
      failed: ['commitment missing: “I’ll put together a pilot plan by Friday”', 'leak: the speaker label “Ada:”'],
    });
    assert.equal(output.grounding?.rewritten, true);
    assert.deepEqual(result.usage, { inputTokens: 1900, outputTokens: 420, totalTokens: 2320 });
    assertStepOutput('WRITER', result.output);
  });

  it('rewrites a draft pasted from the transcript, or with an invented claim about the buyer', async () => {
    const pasted = {
      ...GOOD,
      body: GOOD.body.replace(
        'Your reps lose about 15 hours a week to call notes in Salesforce',
        'You said your reps spend about 15 hours a week copying call notes into Salesforce',
      ),
    };
    const invented = { ...GOOD, body: GOOD.body.replace('Thanks for the call.', 'I know the timing is tight.') };
    server.reply(chat(pasted), chat(GOOD), chat(invented), chat(GOOD));
    await writeChecked(briefed());
    assert.ok(messageText(server.requests[1]!, 'user').includes(
      '- copied from the transcript: “your reps spend about 15 hours a week copying call notes into Salesforce”. '
        + 'Say it in your own words',
    ));
    await writeChecked(briefed());
    assert.ok(messageText(server.requests[3]!, 'user').includes(
      '- “I know the timing is tight.”: a claim about the buyer that nothing they said backs',
    ));
    assert.equal(server.requests.length, 4);
  });
});

describe('model engine: answers that are not usable', () => {
  it('fails the attempt on a malformed answer, with its tokens counted, and succeeds on the next call', async () => {
    server.reply(chat('Sure! Here is the analysis: painPoints are ...', { usage: { prompt_tokens: 700, completion_tokens: 40 } }), chat(ANALYSIS));
    const model = engine();
    const error = await failure(model.analyse(context()));
    assert.ok(error instanceof StepAttemptError, error.name);
    assert.match(error.message, /^the model's answer did not match the ANALYSIS schema: it is not JSON$/);
    assert.deepEqual(error.usage, { inputTokens: 700, outputTokens: 40, totalTokens: 740 });

    const retried = await model.analyse(context());
    assert.deepEqual(retried.output, { ...ANALYSIS, engine: 'model' });
    assert.equal(server.requests.length, 2, 'the engine itself never retries');
  });

  it('fails the attempt on JSON of the wrong shape, naming the field', async () => {
    server.reply(chat({ ...ANALYSIS, sentiment: 'ecstatic' }, { usage: { prompt_tokens: 10, completion_tokens: 5 } }));
    const error = await failure(engine().analyse(context()));
    assert.ok(error instanceof StepAttemptError);
    assert.match(error.message, /^the model's answer did not match the ANALYSIS schema: at \/sentiment/);
    assert.deepEqual(error.usage, { inputTokens: 10, outputTokens: 5, totalTokens: 15 });
  });

  it('fails the attempt on an answer cut off at the token limit', async () => {
    server.reply(chat('{"painPoints": ["My reps spend about', { finishReason: 'length', usage: { prompt_tokens: 900, completion_tokens: 4096 } }));
    const error = await failure(engine().analyse(context()));
    assert.ok(error instanceof StepAttemptError);
    assert.equal(error.message, "the model's answer did not match the ANALYSIS schema: it was cut off at the token limit");
    assert.deepEqual(error.usage, { inputTokens: 900, outputTokens: 4096, totalTokens: 4996 });
  });

  it('takes JSON wrapped in a code fence, and drops fields the schema does not have', async () => {
    server.reply(chat(`\`\`\`json\n${JSON.stringify({ ...STRATEGY, confidence: 0.9 })}\n\`\`\``));
    const result = await engine().strategise(context());
    assert.deepEqual(result.output, { ...STRATEGY, engine: 'model' });
  });

  it('trims a subject that runs a little over 80 characters, and fails an empty draft', async () => {
    const long = 'Kestrel Logistics: giving your reps back the 15 hours a week they spend copying call notes';
    server.reply(chat({ ...DRAFT, subject: long }), chat({ subject: 'Hello', body: '   ' }, { usage: { prompt_tokens: 5, completion_tokens: 1 } }));
    const model = engine();
    const trimmed = await model.write(context());
    assert.ok(trimmed.output.subject.length <= 80, trimmed.output.subject);
    assert.match(trimmed.output.subject, /^Kestrel Logistics: giving your reps back the 15 hours a week they spend\S*…$/);

    const error = await failure(model.write(context()));
    assert.ok(error instanceof StepAttemptError);
    assert.match(error.message, /empty body/);
    assert.deepEqual(error.usage, { inputTokens: 5, outputTokens: 1, totalTokens: 6 });
  });
});

describe('model engine: endpoint failures', () => {
  it('surfaces 429 as a retryable error with a readable message, after one request', async () => {
    server.reply(rateLimited(3));
    const error = await failure(engine().analyse(context()));
    assertRetryable(error);
    assert.ok(!(error instanceof StepAttemptError));
    assert.match(error.message, /^the model endpoint answered 429 Too Many Requests: Rate limit reached, please retry later\. \(retry after 3 s\)$/);
    assert.ok(error instanceof ModelEndpointError);
    assert.equal(error.status, 429);
    assert.equal(error.retryAfterMs, 3000);
    assert.equal(server.requests.length, 1, 'maxRetries is 0: the worker retries');
  });

  it('surfaces 500 as a retryable error', async () => {
    server.reply(status(500, { message: 'upstream exploded' }));
    const error = await failure(engine().strategise(context()));
    assertRetryable(error);
    assert.equal(error.message, 'the model endpoint answered 500 Internal Server Error: upstream exploded');
    assert.equal(server.requests.length, 1);
  });

  it('gives up after timeoutMs with a retryable, readable error', async () => {
    server.reply(hang());
    const error = await failure(engine({ timeoutMs: 150 }).write(context()));
    assertRetryable(error);
    assert.equal(error.message, 'the model endpoint did not answer within 150 ms');
    await server.requests[0]!.aborted; // the client closed the request
  });

  it('names a timeout of a second or more in seconds', async () => {
    server.reply(hang());
    const error = await failure(engine({ timeoutMs: 1000 }).analyse(context()));
    assert.equal(error.message, 'the model endpoint did not answer within 1 s');
  });

  it('stops when the run’s signal is aborted, with the signal’s reason', async () => {
    server.reply(hang());
    const controller = new AbortController();
    const pending = engine().analyse(context({ signal: controller.signal }));
    await server.request(0);
    controller.abort(new Error('the run was cancelled'));
    const error = await failure(pending);
    assert.equal(error.message, 'the run was cancelled');
  });

  it('treats 401 as permanent, without leaking the key the endpoint echoes', async () => {
    server.reply(status(401, { message: `Incorrect API key provided: ${API_KEY}. You can find your API key at https://platform.example/keys.` }));
    const error = await failure(engine().analyse(context()));
    assert.ok(error instanceof PermanentStepError, error.name);
    assert.match(error.message, /^the model endpoint answered 401 Unauthorized: Incorrect API key provided: \*\*\*/);
  });

  it('treats 400, 403 and 404 as permanent, and a masked key in the answer stays out too', async () => {
    for (const code of [400, 403, 404]) {
      server.reply(status(code, { message: `key sk-test-Zq8v****wBc refused for model test-model` }));
      const error = await failure(engine().analyse(context()));
      assert.ok(error instanceof PermanentStepError, `${code}: ${error.name}`);
      assert.match(error.message, new RegExp(`^the model endpoint answered ${code} `));
      assert.doesNotMatch(error.message, /sk-test/);
    }
  });

  it('stops reading an answer larger than 4 MiB, as a retryable error', async () => {
    server.reply(chat({ ...ANALYSIS, painPoints: ['x'.repeat(MAX_ANSWER_BYTES)] }));
    const error = await failure(engine().analyse(context()));
    assertRetryable(error);
    assert.equal(error.message, "the model endpoint's answer is larger than 4 MiB; it was not read");
  });

  it('reports an endpoint it cannot reach as retryable', async () => {
    const closed = await startOpenAIServer();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const error = await failure(createModelEngine({ baseUrl, apiKey: API_KEY, model: 'test-model' }).analyse(context()));
    assertRetryable(error);
    assert.match(error.message, /^could not reach the model endpoint at http:\/\/127\.0\.0\.1:\d+: /);
  });

  it('refuses without a request when the run’s token budget is spent', async () => {
    for (const tokensLeft of [0, -120]) {
      const error = await failure(engine().write(context({ tokensLeft })));
      assert.ok(error instanceof PermanentStepError, error.name);
      assert.match(error.message, /token budget is spent/);
    }
    assert.equal(server.requests.length, 0);

    server.reply(chat(ANALYSIS));
    await engine().analyse(context({ tokensLeft: 1 }));
    assert.equal(server.requests.length, 1, 'a budget with tokens left is used');
  });
});
