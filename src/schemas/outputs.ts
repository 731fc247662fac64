// The output of each pipeline step. Every output is validated against its schema before it is stored
// (src/agent/output-check.ts), and the same schemas document the step outputs in the OpenAPI document.
import { Type, type Static } from 'typebox';

/**
 * The largest answer read from a model endpoint (src/agent/engines/model.ts). An answer is parsed on the event loop, so
 * its size is bounded: the step outputs are a few kilobytes, and anything near this is not an answer to the question
 * asked. No output, nor any text or list in it, is larger.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

const Engine = Type.Union([Type.Literal('offline'), Type.Literal('model')], {
  description: 'Which engine produced the output: the built-in rule-based one, or a language model.',
});

export const Fact = Type.Object({
  text: Type.String({ description: 'A concrete statement found on the source page.' }),
  source: Type.String({ description: 'URL of the page the statement was found on.' }),
});

export const ResearchOutput = Type.Object({
  engine: Engine,
  website: Type.Object({
    url: Type.Union([Type.String(), Type.Null()], { description: "The lead's companyWebsite, or null when it has none." }),
    fetched: Type.Boolean({ description: 'Whether the website could be read.' }),
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the last response, when there was one.' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the website could not be read.' }),
    title: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    summary: Type.Union([Type.String(), Type.Null()], { description: 'A few sentences of the main text.' }),
  }),
  facts: Type.Array(Fact),
  sources: Type.Array(Type.String(), { description: 'Every URL that was read.' }),
});

export const Sentiment = Type.Union([Type.Literal('positive'), Type.Literal('neutral'), Type.Literal('negative')]);

export const KeyFacts = Type.Object(
  {
    figures: Type.Array(
      Type.Object({
        value: Type.String({ description: 'The figure as said: "3%", "$45", "1,200 tickets".' }),
        about: Type.String({ description: 'The sentence it was said in, which says what it measures.' }),
      }),
    ),
    dates: Type.Array(Type.String(), { description: 'Dates and deadlines: "by the end of the month", "March 12", "Q3".' }),
    people: Type.Array(
      Type.Object({
        name: Type.String(),
        role: Type.Union([Type.String(), Type.Null()], { description: 'Their role as said: "COO", "from IT".' }),
        side: Type.Union([Type.Literal('prospect'), Type.Literal('rep')], { description: 'Whose side of the call they are on.' }),
      }),
    ),
    tools: Type.Array(Type.String(), { description: 'Tools and systems in use: "NetSuite", "spreadsheets".' }),
    budgetAndTiming: Type.Array(Type.String(), { description: 'Budget and timing signals, as the prospect said them.' }),
    commitments: Type.Array(Type.String(), { description: 'Every promise the salesperson made on the call: "I’ll send a pilot outline by Friday".' }),
  },
  { description: 'The concrete facts of the call, for the draft to carry.' },
);

export const Evidence = Type.Object(
  {
    kind: Type.Union([Type.Literal('pain'), Type.Literal('objection'), Type.Literal('signal'), Type.Literal('next_step'), Type.Literal('commitment')]),
    text: Type.String({ description: 'The item as it stands in its list (painPoints, objections, buyingSignals, nextSteps, commitments).' }),
    lines: Type.Array(Type.Integer({ minimum: 1 }), { description: 'The transcript lines (1-based) it was read from.' }),
  },
  { description: 'Where an item of the analysis came from in the transcript.' },
);

export const Commitment = Type.Object(
  {
    who: Type.Union([Type.Literal('rep'), Type.Literal('buyer')], { description: 'Who made the commitment.' }),
    what: Type.String({ description: 'What was promised, as said, without its time: "send you our SOC 2 report".' }),
    when: Type.Union([Type.String(), Type.Null()], { description: 'When, as said: "by Friday", "today"; null when no time was said.' }),
    lines: Type.Array(Type.Integer({ minimum: 1 })),
  },
  { description: 'A commitment made on the call, with who, what and when.' },
);

export const AgreedNextStep = Type.Object(
  {
    what: Type.String({ description: 'What was agreed: "demo", "call", "visit".' }),
    when: Type.Union([Type.String(), Type.Null()], { description: 'When, as said: "Tuesday at 10".' }),
    who: Type.Array(Type.String(), { description: 'Who else from the buyer’s side joins.' }),
    lines: Type.Array(Type.Integer({ minimum: 1 })),
  },
  { description: 'The next step both sides agreed on the call.' },
);

export const AnalysisOutput = Type.Object({
  engine: Engine,
  painPoints: Type.Array(Type.String(), { description: 'Problems the lead described, in their words where possible.' }),
  objections: Type.Array(Type.String()),
  buyingSignals: Type.Array(Type.String()),
  nextSteps: Type.Array(Type.String()),
  sentiment: Sentiment,
  // Optional so that outputs stored before it was read still validate.
  facts: Type.Optional(KeyFacts),
  // Optional and additive: outputs stored before them still validate.
  evidence: Type.Optional(Type.Array(Evidence)),
  commitments: Type.Optional(Type.Array(Commitment)),
  agreedNextStep: Type.Optional(Type.Union([AgreedNextStep, Type.Null()])),
  format: Type.Optional(Type.String({ description: 'The transcript format read: webvtt, srt, otter, timestamped, rep-prospect, speaker-n, labelled, meet, plain.' })),
});

export const StrategyOutput = Type.Object({
  engine: Engine,
  angle: Type.String({ description: 'The one idea the e-mail is built around.' }),
  valuePropositions: Type.Array(Type.String()),
  callToAction: Type.String(),
  tone: Type.String(),
});

export const WriterOutput = Type.Object({
  engine: Engine,
  subject: Type.String({ minLength: 1, maxLength: 80 }),
  body: Type.String({ minLength: 1, maxLength: 5000 }),
  // Optional so an engine's own answer validates; the pipeline's WRITER step always sets it.
  grounding: Type.Optional(
    Type.Object(
      {
        grounded: Type.Boolean({ description: 'Whether every specific claim in the draft is backed by RESEARCH, ANALYSIS, STRATEGY or the call.' }),
        rewritten: Type.Boolean({ description: 'Whether the first draft made unsupported claims, or failed another check, and was written again.' }),
        unsupported: Type.Array(Type.String(), { description: 'The claims still unsupported in the kept draft, each with its sentence.' }),
      },
      { description: 'The grounding check of the draft (DESIGN §3).' },
    ),
  ),
  // Optional, like grounding, and so that outputs stored before the checks were made still validate.
  checks: Type.Optional(
    Type.Object(
      {
        passed: Type.Boolean({ description: 'Whether the kept draft passed every check.' }),
        failed: Type.Array(Type.String(), {
          description:
            'The checks the kept draft failed, each named first: `word limit: …`, `commitment missing: …`, `leak: …`, '
            + '`copied from the transcript: …`, `ungrounded: …`.',
        }),
      },
      {
        description:
          'The checks of the draft (DESIGN §12): its length, the rep’s commitments, transcript leaks, text copied from the '
          + 'transcript and grounding. A model’s draft that fails them is written once more; a second failure is kept, named.',
      },
    ),
  ),
});

export type Fact = Static<typeof Fact>;
export type ResearchOutput = Static<typeof ResearchOutput>;
export type AnalysisOutput = Static<typeof AnalysisOutput>;
export type KeyFacts = Static<typeof KeyFacts>;
export type Evidence = Static<typeof Evidence>;
export type StrategyOutput = Static<typeof StrategyOutput>;
export type WriterOutput = Static<typeof WriterOutput>;

export const STEP_NODES = ['RESEARCH', 'ANALYSIS', 'STRATEGY', 'WRITER'] as const;
export type StepNode = (typeof STEP_NODES)[number];
