// Every error leaves the server as an RFC 9457 problem document. The code → status map lives here and only here.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, type FieldError } from '../domain/errors.ts';
import { fieldErrorsOf } from '../domain/validators.ts';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  run_limit_reached: 402,
  insufficient_scope: 403,
  forbidden: 403,
  not_found: 404,
  misdirected_request: 421,
  idempotency_conflict: 409,
  invalid_state: 409,
  mail_not_configured: 409,
  recipient_suppressed: 409,
  sender_incomplete: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

const TITLE_OF: Record<ErrorCode, string> = {
  invalid_request: 'Invalid request',
  unauthorized: 'Unauthorized',
  run_limit_reached: 'Monthly run limit reached',
  insufficient_scope: 'Insufficient scope',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  misdirected_request: 'Misdirected request',
  idempotency_conflict: 'Request in progress',
  invalid_state: 'Invalid state',
  mail_not_configured: 'E-mail is not set up',
  recipient_suppressed: 'Recipient suppressed',
  sender_incomplete: 'Sender identity incomplete',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_reused: 'Idempotency key reused',
  rate_limited: 'Too many requests',
  internal: 'Internal server error',
  unavailable: 'Service unavailable',
};

export const PROBLEM_TYPE_BASE = 'https://leadrun.dev/problems/';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
  errorCount?: number;
  [extra: string]: unknown;
}

/** At most this many entries of `errors` are sent; `errorCount` says how many there were in all. */
export const MAX_LISTED_ERRORS = 50;

export function problemOf(error: AppError, requestId: string): Problem {
  // Extra members come first, so that none of them can replace a standard member.
  return {
    ...error.extra,
    type: `${PROBLEM_TYPE_BASE}${error.code.replaceAll('_', '-')}`,
    title: TITLE_OF[error.code],
    status: STATUS_OF[error.code],
    detail: error.message,
    code: error.code,
    requestId,
    ...(error.errors ? { errors: error.errors.slice(0, MAX_LISTED_ERRORS), errorCount: error.errors.length } : {}),
  };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const problem = problemOf(error, request.id);
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="leadrun"');
  if (error.code === 'unavailable' && !reply.hasHeader('retry-after')) reply.header('retry-after', '5');
  const retryAfter = error.extra?.retryAfterSeconds;
  if (error.code === 'rate_limited' && typeof retryAfter === 'number' && !reply.hasHeader('retry-after')) reply.header('retry-after', String(retryAfter));
  return reply.code(problem.status).type('application/problem+json; charset=utf-8').serializer(JSON.stringify).send(problem);
}

// Errors of node-postgres and PGlite that mean the database cannot be reached right now.
const UNAVAILABLE_NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH']);
const UNAVAILABLE_SQLSTATE = /^(08|57P0[1-3]|53300)/;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_NETWORK.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|PGlite is closed/i.test(error.message);
}

function validationErrors(error: FastifyError): FieldError[] {
  const part = error.validationContext === 'querystring' ? 'query' : error.validationContext ?? 'body';
  return fieldErrorsOf(error.validation ?? [], part === 'body' ? '(body)' : part);
}

/** How many field errors the `detail` of a validation problem spells out; `errors` lists more. */
const SUMMARISED_ERRORS = 5;

/** Turns anything thrown while handling a request into the AppError it should be answered with. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) {
    const errors = validationErrors(fastifyError);
    const summary = errors.slice(0, SUMMARISED_ERRORS).map((e) => `${e.field} ${e.message}`).join('; ');
    const more = errors.length > SUMMARISED_ERRORS ? `; and ${errors.length - SUMMARISED_ERRORS} more` : '';
    return new AppError('invalid_request', `The request is invalid: ${summary}${more}.`, { errors });
  }
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'The request body must be JSON, sent with Content-Type: application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is larger than the limit of 1 MiB.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'The request body is empty; send a JSON object.', { errors: [{ field: '(body)', message: 'is empty' }] });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'The Content-Length header does not match the body.');
  }
  if (fastifyError?.statusCode === 400 && (error instanceof SyntaxError || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY')) {
    return new AppError('invalid_request', 'The request body is not valid JSON.', { errors: [{ field: '(body)', message: 'is not valid JSON' }] });
  }
  if (fastifyError?.statusCode === 413) return new AppError('payload_too_large', 'The request body is larger than the limit of 1 MiB.');
  if (fastifyError?.statusCode === 415) return new AppError('unsupported_media_type', 'The request body must be JSON, sent with Content-Type: application/json.');
  if (isDatabaseUnavailable(error)) return new AppError('unavailable', 'The database cannot be reached right now; try again shortly.');
  if (fastifyError?.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new AppError('invalid_request', fastifyError.message);
  }
  return new AppError('internal', 'Something went wrong on our side; the error has been logged.');
}
