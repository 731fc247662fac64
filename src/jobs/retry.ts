// How a job kind retries (issue 40): one RetryPolicy per kind, declared with it in kinds.ts. The runner counts the
// attempts and asks the policy how long to wait after each failed one; `hint` is what the other side asked for (a
// RetryableError's retryAfterMs: a Retry-After, or 0 for "at once"), null when it said nothing.
export interface RetryPolicy {
  /** Attempts in all, the first included: after the last, the job is DEAD. */
  maxAttempts: number;
  /** Milliseconds to wait after failed attempt `attempt` (from 1). */
  delay(attempt: number, hint: number | null): number;
}

/** Doubling from `firstMs` after the first attempt, at most `maxMs`; a hint replaces it. */
export function exponentialBackoff(maxAttempts: number, firstMs: number, maxMs = Number.POSITIVE_INFINITY): RetryPolicy {
  return { maxAttempts, delay: (attempt, hint) => hint ?? Math.min(firstMs * 2 ** Math.max(0, attempt - 1), maxMs) };
}

/** The delays of a schedule in turn, the last one for every later attempt; a hint replaces them. */
export function retrySchedule(maxAttempts: number, delaysMs: readonly number[]): RetryPolicy {
  return { maxAttempts, delay: (attempt, hint) => hint ?? delaysMs[Math.min(attempt, delaysMs.length) - 1] ?? delaysMs.at(-1)! };
}
