// Every error leaves the server as an RFC 9457 problem document. The code → status map lives here and only here.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, type FieldError } from '../domain/errors.ts';
import {
  BLANK_MESSAGE, EMAIL_MESSAGE, emailProblem, NOT_BLANK_PATTERN, ONE_LINE_MESSAGE, ONE_LINE_PATTERN, WEBSITE_MESSAGE,
} from '../domain/validation.ts';

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

/** A JSON pointer as a field name: `/runs/3/callId` is `runs[3].callId`. */
function fieldPath(pointer: string): string {
  return pointer.split('/').slice(1).reduce((path, segment) => {
    if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
    return path ? `${path}.${segment}` : segment;
  }, '');
}

function validationErrors(error: FastifyError): FieldError[] {
  const part = error.validationContext === 'querystring' ? 'query' : error.validationContext ?? 'body';
  return fieldErrorsOf(error.validation ?? [], part === 'body' ? '(body)' : part);
}

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  params: unknown;
  message?: string | undefined;
  /** The value refused (Ajv's `verbose`). */
  data?: unknown;
}

function isUnionNoise(issue: ValidationIssue): boolean {
  return issue.keyword === 'anyOf' || (issue.keyword === 'type' && (issue.params as { type?: unknown }).type === 'null');
}

/**
 * Schema validation issues as the API names them: each field by its path, with Ajv's message (`is required`, `is
 * not a known field`, `must be one of …`). `whole` names the validated value itself (an issue with an empty path).
 * A lead import's rows are reported with the same words as POST /api/v1/leads.
 */
export function fieldErrorsOf(issues: ReadonlyArray<ValidationIssue>, whole: string): FieldError[] {
  // A nullable field's wrong value fails both branches of its union: "must be null" and "must match a schema in
  // anyOf" say nothing the other branch's error does not, and are left out when it is there.
  // A nullable object's wrong field explains the noise about the object itself too.
  const explained = issues.filter((issue) => !isUnionNoise(issue)).map((issue) => issue.instancePath);
  const isExplained = (path: string) => explained.some((p) => p === path || p.startsWith(`${path}/`));
  return issues.filter((issue) => !(isUnionNoise(issue) && isExplained(issue.instancePath))).map((issue) => {
    const params = issue.params as Record<string, unknown>;
    const path = fieldPath(issue.instancePath);
    if (issue.keyword === 'required') return { field: [path, params.missingProperty].filter(Boolean).join('.'), message: 'is required' };
    if (issue.keyword === 'additionalProperties') {
      return { field: [path, params.additionalProperty].filter(Boolean).join('.'), message: 'is not a known field' };
    }
    const isAddress = issue.keyword === 'format' && EMAIL_FORMATS.has(String(params.format));
    const email = isAddress && typeof issue.data === 'string' ? emailProblem(issue.data) : null;
    return { field: path || whole, message: email ?? issueMessage(issue.keyword, params, issue.message) };
  });
}

/** The formats of an e-mail address, refused with what is wrong with the address (`emailProblem`). */
const EMAIL_FORMATS = new Set(['email', 'idn-email']);

const FORMATS: Record<string, string> = {
  email: EMAIL_MESSAGE,
  'idn-email': EMAIL_MESSAGE,
  uri: 'must be an absolute URL',
  website: WEBSITE_MESSAGE,
  uuid: 'must be a UUID',
  'date-time': 'must be a date and time such as 2026-03-01T09:30:00Z',
};

const TYPES: Record<string, string> = {
  string: 'must be text', integer: 'must be a whole number', number: 'must be a number', boolean: 'must be true or false',
  object: 'must be an object', array: 'must be a list', null: 'must be null',
};

/** A pattern a schema uses says in words what it wants; any other pattern is named as it is. */
const PATTERNS: Record<string, string> = {
  '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]': 'must be an http or https URL',
  [ONE_LINE_PATTERN]: ONE_LINE_MESSAGE,
  [NOT_BLANK_PATTERN]: BLANK_MESSAGE,
};

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Ajv's issue in words a person reads on a form, a CLI or an import report: `must be at most 200 characters`. */
function issueMessage(keyword: string, params: Record<string, unknown>, fallback: string | undefined): string {
  const limit = Number(params.limit);
  switch (keyword) {
    case 'enum': return `must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'format': return FORMATS[String(params.format)] ?? `must be a valid ${String(params.format)}`;
    case 'type': return TYPES[String(params.type)] ?? fallback ?? 'is invalid';
    case 'pattern': return PATTERNS[String(params.pattern)] ?? `must match the pattern ${String(params.pattern)}`;
    case 'maxLength': return `must be at most ${plural(limit, 'character')}`;
    case 'minLength': return limit === 1 ? 'must not be empty' : `must be at least ${plural(limit, 'character')}`;
    case 'maxItems': return `must have at most ${plural(limit, 'item')}`;
    case 'minItems': return limit === 1 ? 'must not be empty' : `must have at least ${plural(limit, 'item')}`;
    case 'maximum': return `must be at most ${limit}`;
    case 'minimum': return `must be at least ${limit}`;
    case 'exclusiveMaximum': return `must be less than ${limit}`;
    case 'exclusiveMinimum': return `must be more than ${limit}`;
    case 'minProperties': return 'must not be empty';
    default: return fallback ?? 'is invalid';
  }
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
