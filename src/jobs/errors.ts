// The one pair of errors that says whether a failed attempt is worth another: a step's, an SMTP server's, an IMAP
// server's, a webhook endpoint's alike. The runner (runner.ts) reads nothing else: a RetryableError is tried again
// after its kind's RetryPolicy delay (or after what the other side asked), a PermanentError ends the job at once.
// Any other error is a retryable one whose message is kept as it is.

/** An attempt failed for now, with the time the other side asked us to wait, if it said (a 4xx with a delay). */
export class RetryableError extends Error {
  readonly permanent = false;
  readonly retryAfterMs: number | null;
  constructor(message: string, retryAfterMs: number | null = null, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
    this.retryAfterMs = retryAfterMs;
  }
}

/** An attempt failed for good: another with the same input cannot succeed (a 5xx from an SMTP server, a refused password). */
export class PermanentError extends Error {
  readonly permanent = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** A failure of the pair: one whose message was written for a person, and whose permanence is known. */
export function isAttemptFailure(error: unknown): error is RetryableError | PermanentError {
  return error instanceof RetryableError || error instanceof PermanentError;
}

/** The pair's member for a failure whose permanence a flag says. */
export function attemptFailure(message: string, permanent: boolean): RetryableError | PermanentError {
  return permanent ? new PermanentError(message) : new RetryableError(message);
}

/** The lease was lost while the job was worked: another runner has it, or it was cancelled or erased. */
export class LeaseLost extends Error {
  /** `what` names the job: `job <id>`, `run <id>`. */
  constructor(what: string) {
    super(`the lease on ${what} was lost`);
    this.name = 'LeaseLost';
  }
}

/** An error as a job or run records it: its message, cut to `max` characters. */
export function describeError(error: unknown, max: number): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > max ? `${message.slice(0, max - 3)}...` : message;
}
