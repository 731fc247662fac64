// Reply classification by a language model, through any OpenAI-compatible endpoint, the way the model engine asks for
// a step's output (../engines/model.ts): the answer's JSON schema is derived from ReplyClassification, the answer is
// checked against it and held to what each class may carry. One request per reply; a failure is thrown, and the reply
// check then keeps the offline reading (src/mail/replies.ts).
import { APICallError, generateText, jsonSchema, NoObjectGeneratedError, Output } from 'ai';
import { Compile } from 'typebox/compile';
import { answerTooLarge, MAX_ANSWER_BYTES, modelProvider, salvageJson, schemaForModel } from '../engines/model.ts';
import * as replyPrompt from '../prompts/reply.ts';
import { dayAt, writtenAt } from './written.ts';
import { classified, ReplyClassification, type ReplyInput } from './types.ts';

export interface ReplyClassifier {
  /** What the reply says; throws ReplyClassifierError when no reading could be had. */
  classify(reading: ReplyInput, signal?: AbortSignal): Promise<ReplyClassification>;
}

export class ReplyClassifierError extends Error {
  override name = 'ReplyClassifierError';
}

export interface ModelReplyClassifierOptions {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  /** How long one request may take; default 30 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const SHAPE = schemaForModel(ReplyClassification);
const validator = Compile(ReplyClassification);
const DEFAULT_TIMEOUT_MS = 30_000;

/** The answer as a ReplyClassification, each field only where its class allows it; throws when it is not one. */
export function heldToShape(answer: unknown): ReplyClassification {
  if (!validator.Check(answer)) {
    const first = validator.Errors(answer)[0];
    throw new ReplyClassifierError(`the model's answer did not match the reply schema at ${first?.instancePath || '(root)'}: ${first?.message ?? 'invalid'}`);
  }
  const { classification, returnsOn, followUpAfter, person } = answer;
  // A day of the calendar: "2026-02-31" matches the pattern and is none.
  const real = (day: string | null) => {
    const date = day ? new Date(`${day}T00:00:00Z`) : null;
    return date && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day ? day : null;
  };
  return classified(classification, {
    returnsOn: classification === 'out_of_office' ? real(returnsOn) : null,
    followUpAfter: classification === 'not_now' ? real(followUpAfter) : null,
    person: classification === 'referral' && person && (person.name || person.email)
      ? { name: person.name?.trim() || null, email: person.email?.trim() || null } : null,
  });
}

export function createModelReplyClassifier(options: ModelReplyClassifierOptions): ReplyClassifier {
  const provider = modelProvider(options);
  const model = provider.chatModel(options.model);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  return {
    async classify(reading, signal) {
      const written = writtenAt(reading.date, reading.receivedAt ?? new Date());
      const timeout = AbortSignal.timeout(timeoutMs);
      let answer: unknown;
      try {
        const result = await generateText({
          model,
          system: `${replyPrompt.system}\n\nAnswer with one JSON object and nothing else, matching this JSON schema:\n${JSON.stringify(SHAPE)}`,
          prompt: replyPrompt.render(reading, { day: dayAt(written.instant, written.offsetMinutes), offsetMinutes: written.offsetMinutes }),
          output: Output.object({ schema: jsonSchema<Record<string, unknown>>(SHAPE), name: 'reply_classification' }),
          maxRetries: 0,
          abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
        answer = result.output;
      } catch (error) {
        // A model without structured output may still wrap its JSON in a code fence or a sentence.
        answer = NoObjectGeneratedError.isInstance(error) ? salvageJson(error.text) : undefined;
        if (answer === undefined) {
          // Not the endpoint's own words: some endpoints echo the key they refused.
          const why = timeout.aborted ? `no answer within ${timeoutMs} ms`
            : answerTooLarge(error) ? `its answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB, and was not read`
            : APICallError.isInstance(error) && error.statusCode ? `the endpoint answered ${error.statusCode}` : (error as Error).name;
          throw new ReplyClassifierError(`the model could not classify the reply: ${why}`);
        }
      }
      return heldToShape(answer);
    },
  };
}
