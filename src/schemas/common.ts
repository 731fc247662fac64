// What every resource's schema is made of: nullable values, bounded integers and timestamps, identifiers, the
// problem document of an error, pages and the error answers of the OpenAPI document.
// Every string and array of the document states its bound, answers included, so that a client can size what it
// stores: the bound a request is checked against, or what the server writes at most.
import { Type, type TSchema } from 'typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** `2026-01-31T09:30:00.000Z`: 24 characters; a year past 9999 takes 3 more. */
export const TIMESTAMP_MAX = 27;
/**
 * An error or a message the server wrote (why a step, a run or a delivery failed): a sentence or a few, which may quote
 * the request's path (Node takes at most 16 KiB of request line and headers).
 */
export const MESSAGE_MAX = 20_000;
/** An e-mail address (RFC 5321), and a header line of an e-mail (RFC 5322). */
export const EMAIL_MAX = 254;
export const HEADER_LINE_MAX = 998;
/** A reviewer's feedback on a rejected draft. */
export const FEEDBACK_MAX = 2000;
// An integer states its range: what it is checked against, or else all that its format holds. A 64-bit integer of
// this API is a JavaScript number, exact up to 2^53 - 1.
export const INT32_MAX = 2_147_483_647;
export const Int32 = (options: Parameters<typeof Type.Integer>[0] = {}) =>
  Type.Integer({ format: 'int32', minimum: -INT32_MAX - 1, maximum: INT32_MAX, ...options });
export const Int64 = (options: Parameters<typeof Type.Integer>[0] = {}) =>
  Type.Integer({ format: 'int64', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options });
export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', maxLength: TIMESTAMP_MAX, description: description ?? 'ISO 8601 timestamp in UTC with milliseconds.' });
export const Id = (description: string) => Type.String({ format: 'uuid', maxLength: 36, description });


export const ProblemRef = Type.Ref('Problem');

export const Limit = (fallback: number, max: number) =>
  Int32({ minimum: 1, maximum: max, default: fallback, description: `Page size, 1 to ${max}.` });

export const Cursor = Type.String({ minLength: 1, maxLength: 512, description: 'Opaque; take it from the Link header of the previous page.' });

// Not checked as a UUID: any other text is a 404, as for an identifier that is not there. 100 is the longest path
// segment the router takes.
export const IdParam = Type.Object({ id: Type.String({ maxLength: 100, description: 'Identifier (UUID).' }) });

export const dataOf = <T extends TSchema>(schema: T) => Type.Object({ data: schema });
/** A list answer: a page of at most `max` items (the largest `limit`, or all there can be). */
export const listOf = <T extends TSchema>(schema: T, max: number) => Type.Object({ data: Type.Array(schema, { maxItems: max }) });

/**
 * A JSON answer with what it is, for the OpenAPI document: the response's description. Without one, @fastify/swagger
 * writes "Default Response", which tells a reader of /docs or of a generated client nothing. It is said by the
 * extension @fastify/swagger reads for it, and drops from the schema, rather than by a `{description, content}`
 * response: in that form a schema with an `$id` (Lead, Run…) is written out in full where it is used instead of as a
 * named component.
 */
export const answer = <T extends TSchema>(description: string, schema: T): T =>
  ({ ...schema, 'x-response-description': description });

/** An error answer in the OpenAPI document: an RFC 9457 problem, sent as application/problem+json. */
export const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemRef } } });

/** The error answers every authenticated route can give. */
export const authProblems = {
  400: problem('The request is invalid; `errors` names each field.'),
  401: problem('No API key, or a malformed, unknown or revoked one.'),
  403: problem('The key lacks the scope this endpoint needs; `requiredScope` names it.'),
  404: problem('No such resource in this workspace.'),
  429: problem('Too many requests for this key; see `Retry-After`.'),
  503: problem('The database cannot be reached; see `Retry-After`.'),
};

/** The further error answers of a POST or PATCH with a JSON body. */
export const writeProblems = {
  409: problem('A request with this Idempotency-Key is still in flight.'),
  413: problem('The body is over 1 MiB.'),
  415: problem('The body is not application/json.'),
  422: problem('This Idempotency-Key was used for a different request.'),
};
