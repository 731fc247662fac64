// The errors the client throws: one for every answer of the API that is not a success, carrying its RFC 9457
// problem document, one for a webhook whose signature does not hold, and one for a wait that ran out of time.
import type { components } from './schema.js';

/** The problem document every error of the API answers with (application/problem+json). */
export type Problem = components['schemas']['Problem'];

/** An answer of the API that is not a success: its status and problem document. */
export class LeadrunError extends Error {
  override readonly name = 'LeadrunError';
  /** The HTTP status. */
  readonly status: number;
  /** The problem's stable code, to branch on; `http_error` when the answer was not a problem document (a proxy's page). */
  readonly code: Problem['code'] | 'http_error';
  readonly title: string;
  readonly detail: string;
  /** For a request that failed validation: what is wrong with each field. */
  readonly errors: NonNullable<Problem['errors']>;
  /** The X-Request-Id of the request, to quote when asking for help; null when the answer carried none. */
  readonly requestId: string | null;
  /** The problem document as the API sent it; null when the answer was not one. */
  readonly problem: Problem | null;
  /** The answer's headers (Retry-After, RateLimit, WWW-Authenticate…). */
  readonly headers: Headers;

  constructor(status: number, problem: Problem | null, headers: Headers, fallbackText = '') {
    const title = problem?.title ?? `HTTP ${status}`;
    const detail = problem?.detail ?? fallbackText.slice(0, 500);
    super(detail ? `${title}: ${detail}` : title);
    this.status = status;
    this.problem = problem;
    this.code = problem?.code ?? 'http_error';
    this.title = title;
    this.detail = detail;
    this.errors = problem?.errors ?? [];
    this.requestId = problem?.requestId ?? headers.get('x-request-id');
    this.headers = headers;
  }
}

/** Why a webhook was refused by `webhooks.verify`. */
export type WebhookVerificationReason = 'missing_headers' | 'invalid_secret' | 'timestamp_out_of_tolerance' | 'invalid_signature' | 'invalid_body';

/** A webhook whose headers, timestamp or signature do not hold: do not trust its body. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** `runs.wait` gave up: the run did not come to rest (or satisfy `until`) within `timeoutMs`. */
export class LeadrunTimeoutError extends Error {
  override readonly name = 'LeadrunTimeoutError';
}
