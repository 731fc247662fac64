// Follow-ups written by a model (src/agent/follow-up/model.ts) through the real AI SDK client against an
// OpenAI-compatible endpoint on loopback (test/support/openai-server.ts): the request carries the follow-up prompt,
// the earlier e-mails as data and the body's schema; an answer that passes the checks is the draft, in the thread and
// signed; an answer that fails them (too long, a sentence of touch 1 again, an unsupported claim, no JSON) gives the
// offline writer's draft; an endpoint that refuses throws, without the key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PermanentStepError, ModelEndpointError, type RunContext } from '../../src/agent/engine.ts';
import { bodyWordCount } from '../../src/agent/draft-checks.ts';
import { offlineRules } from '../../src/agent/engines/offline.ts';
import { writeFollowUp, type FollowUpInput } from '../../src/agent/follow-up/index.ts';
import * as followUpPrompt from '../../src/agent/prompts/follow-up.ts';
import { ANSWER_TOO_LARGE, MAX_ANSWER_BYTES } from '../../src/agent/engines/model.ts';
import type { ResearchOutput } from '../../src/schemas/outputs.ts';
import { chat, messageText, startOpenAIServer, status, type OpenAIServer } from '../support/openai-server.ts';

const API_KEY = 'sk-test-Fw7pQ2zX9LmN4rTb';
const RESEARCH: ResearchOutput = {
  engine: 'offline',
  website: { url: 'https://northwind.example', fetched: true, status: 200, error: null, title: 'Northwind Supply', description: null, summary: null },
  facts: [{ text: 'Northwind Supply runs three warehouses in Ohio.', source: 'https://northwind.example/' }],
  sources: ['https://northwind.example/'],
};
const TRANSCRIPT = [
  'Grace: Thanks for the time today, Maria. How is fulfilment going?',
  'Maria: Honestly, our mis-pick rate is running at 3% and every wrong order costs us about $45 to fix.',
  'Maria: The pick lists are printed from spreadsheets, and the night shift retypes about 400 orders by hand.',
  'Grace: Would a pilot in one warehouse help?',
  'Maria: Yes. Daniel, our COO, wants a decision by the end of the month.',
  'Grace: Great. I’ll send a pilot outline by Friday. Could we do a call with Daniel on Thursday at 2pm?',
  'Maria: Thursday at 2pm works.',
].join('\n');

const sender = { name: 'Grace Hopper', signature: null };
const lead = { id: 'l', name: 'Maria Lopez', email: 'maria@northwind.example', companyName: 'Northwind Supply', companyWebsite: 'https://northwind.example' };
const call = { id: 'c', title: null, transcript: TRANSCRIPT, occurredAt: null };

function inputOf(): FollowUpInput {
  const ctx: RunContext & { research: ResearchOutput } = { runId: 'r', lead, call, senderName: sender.name, sender, research: RESEARCH };
  const analysis = offlineRules.analyse(ctx).output;
  const strategy = offlineRules.strategise({ ...ctx, analysis }).output;
  const first = offlineRules.write({ ...ctx, analysis, strategy }).output;
  return {
    lead, call, research: RESEARCH, analysis, strategy, sender, touchNumber: 2, touchCount: 3,
    instruction: 'a short bump with one new point from the call', earlier: [{ subject: first.subject, body: first.body }],
  };
}

const GOOD = 'Hi Maria,\n\nA quick follow-up on my note after our call. One more thing from it: your pick lists still come from spreadsheets.\n\nIs Thursday at 2pm with Daniel still good for you?\n\nBest,\nGrace';

describe('follow-ups written by a model', () => {
  let server: OpenAIServer;
  before(async () => { server = await startOpenAIServer(); });
  after(() => server.close());
  const model = () => ({ baseUrl: server.baseUrl, apiKey: API_KEY, model: 'writer-model', timeoutMs: 5_000 });

  it('asks with the follow-up prompt and the thread as data; a draft that passes the checks is kept, in the thread and signed', async () => {
    const input = inputOf();
    server.reply(chat({ body: GOOD }));
    const draft = await writeFollowUp(input, { model: model() });
    assert.equal(draft.subject, `Re: ${input.earlier[0]!.subject}`);
    assert.match(draft.body, /pick lists still come from spreadsheets/);
    // Signed as every engine signs (sign-off.ts): the model's closing, then the sender's name as set, once.
    assert.match(draft.body, /\n\nBest,\nGrace Hopper$/);
    assert.ok(bodyWordCount(draft.body) <= 100);
    assert.equal(draft.writtenBy?.engine, 'model');
    assert.equal(draft.writtenBy?.promptVersion, 'follow-up-v1');
    assert.ok((draft.writtenBy?.usage?.totalTokens ?? 0) > 0, JSON.stringify(draft.writtenBy));

    const request = server.requests.at(-1)!;
    assert.equal(request.body.model, 'writer-model');
    assert.equal(request.body.response_format.type, 'json_schema');
    assert.deepEqual(request.body.response_format.json_schema.schema.required, ['body']);
    assert.match(messageText(request, 'system'), /exactly ONE point that none of the earlier e-mails made/);
    const user = messageText(request, 'user');
    assert.match(user, /<earlier_email>\nTouch 1\nSubject: /);
    assert.match(user, /follow-up 2 of 3/);
    assert.match(user, /<instruction>\na short bump with one new point from the call/);
    // The offline reading's points not yet made are offered; those touch 1 made are not.
    assert.match(user, /Points of the call none of them made yet[^\n]*\n- the pick lists are printed from spreadsheets\n- Northwind Supply runs three warehouses in Ohio\n/);
    assert.doesNotMatch(user.slice(user.indexOf('Points of the call none')), /^- .*400 orders/m);
    assert.equal(followUpPrompt.version, 'follow-up-v1');
  });

  it('an answer that fails the checks gives the offline writer’s draft', async () => {
    const input = inputOf();
    const offline = await writeFollowUp(input);
    const firstSentence = /\n\n([^\n]+?\.)\s/.exec(input.earlier[0]!.body)![1]!;
    const failing = [
      chat({ body: `Hi Maria,\n\n${'We can help your team a great deal with this. '.repeat(15)}\n\nBest regards,\nGrace Hopper` }),
      chat({ body: `Hi Maria,\n\n${firstSentence} Is Thursday at 2pm still good?\n\nBest regards,\nGrace Hopper` }),
      // Touch 1's point again, in other words than its sentence.
      chat({ body: 'Hi Maria,\n\nA quick follow-up. One more thing that stayed with me: the night shift retypes around 400 orders by hand.\n\nBest regards,\nGrace Hopper' }),
      chat({ body: 'Hi Maria,\n\nYour 12 warehouses in Texas lose $2 million a year to mis-picks. Is Thursday at 2pm still good?\n\nBest regards,\nGrace Hopper' }),
      chat('I would rather not answer in JSON.'),
      chat({ subject: 'no body here' }),
    ];
    assert.deepEqual(offline.writtenBy, { engine: 'offline', model: null, promptVersion: 'follow-up-offline-1', usage: null });
    for (const reply of failing) {
      server.reply(reply);
      const { writtenBy, ...draft } = await writeFollowUp(input, { model: model() });
      assert.deepEqual(draft, { subject: offline.subject, body: offline.body });
      // The offline draft is kept; the tokens the refused answer cost still count.
      assert.equal(writtenBy?.engine, 'offline');
    }
  });

  it('answers the buyer’s reply through the model, held to the same checks', async () => {
    const input = { ...inputOf(), reply: { from: 'maria@northwind.example', text: 'Sounds good, Daniel is keen. Thursday works.' } };
    server.reply(chat({ body: 'Hi Maria,\n\nGreat to hear, thank you. I’ll send a calendar invite for Thursday at 2pm with Daniel.\n\nBest regards,\nGrace Hopper' }));
    const draft = await writeFollowUp(input, { model: model() });
    assert.match(draft.body, /calendar invite for Thursday at 2pm/);
    assert.match(messageText(server.requests.at(-1)!, 'user'), /<reply>\nSounds good, Daniel is keen/);
  });

  it('an endpoint that refuses throws for the caller’s retry, without the key', async () => {
    const input = inputOf();
    server.reply(status(401, { message: `Incorrect API key provided: ${API_KEY}` }));
    await assert.rejects(writeFollowUp(input, { model: model() }), (error: unknown) => error instanceof PermanentStepError && !error.message.includes(API_KEY));
    server.reply(status(503, { message: 'overloaded' }));
    await assert.rejects(writeFollowUp(input, { model: model() }), (error: unknown) => error instanceof ModelEndpointError && error.status === 503);
  });

  it('stops reading an answer larger than 4 MiB, as a retryable error, as the steps\' model calls do', async () => {
    server.reply(chat({ body: 'x'.repeat(MAX_ANSWER_BYTES) }));
    await assert.rejects(writeFollowUp(inputOf(), { model: model() }),
      (error: unknown) => error instanceof ModelEndpointError && error.message === ANSWER_TOO_LARGE);
  });
});
