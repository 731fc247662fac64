// What a well-behaved model answers each step of a run about Analytical Engines, for tests that run whole runs on
// the model engine against test/support/openai-server.ts; the WRITER's draft cites the company page's one fact, so
// the grounding guard keeps it as it is.
import { chat, type RecordedRequest, type Reply } from './openai-server.ts';

export const FACT = 'Analytical Engines helps 1,200 finance teams close their books in one day.';
export const COMPANY_PAGE = `<!doctype html><html><head><title>Analytical Engines</title></head><body><main><p>${FACT}</p></main></body></html>`;
export const USAGE = { prompt_tokens: 400, completion_tokens: 100 };

export const ANSWERS: Record<string, unknown> = {
  analysis: {
    painPoints: ['Our month-end reporting takes four days and the finance team is exhausted.'],
    objections: ['The price was too high for us last year.'],
    buyingSignals: ['Budget is approved for Q3 if a pilot shows results.'],
    nextSteps: ['Send a pilot plan next week.'],
    sentiment: 'positive',
  },
  strategy: {
    angle: 'Cut the four-day month-end close with a small pilot.',
    valuePropositions: ['A shorter close', 'A pilot before any commitment'],
    callToAction: 'Would a two-week pilot with your finance team suit you?',
    tone: 'warm and concise',
  },
  writer: {
    subject: 'A shorter month-end close for Analytical Engines',
    body: `Hi Ada,\n\nThank you for the call. You said month-end reporting takes four days and the team is exhausted.\n\n`
      + `I read that ${FACT} A two-week pilot with your finance team would show what we can do for your close.\n\n`
      + 'Would that suit you?\n\nBest,\nSam',
  },
};

/** Which step a request is for, from the name of the structured output it asks for. */
export const stepOf = (request: RecordedRequest): string => request.body?.response_format?.json_schema?.name ?? 'unknown';

/** The step's answer, as a model would give it. */
export const answer = (request: RecordedRequest): Reply => chat(ANSWERS[stepOf(request)] ?? {}, { usage: USAGE, model: 'gpt-test-2026' });
