// Attempts allowed in a window, then 429, for what a client could try in bulk (a reset token, a current password).
// Counted by @fastify/rate-limit's store: in memory, or in Redis shared by every process.
import type { FastifyRequest } from 'fastify';
import type { AppInstance } from './app-instance.ts';
import { AppError } from '../domain/errors.ts';

// Attempts allowed in the window, then 429: reset tokens per client address (an IPv6 client by its /64), and
// current-password checks per person. Tokens are 256 random bits, so this is not what keeps them safe; it keeps
// a client from trying in bulk, and a stolen session from guessing its owner's password.
const ATTEMPT_WINDOW_MS = 15 * 60 * 1000;
export const RESET_ATTEMPTS_PER_ADDRESS = 10;
export const PASSWORD_CHANGES_PER_USER = 10;

/** A counter of attempts (in memory, or in Redis shared by every process), refusing past `max` in the window. */
export function attemptLimit(app: AppInstance, name: string, max: number, keyOf: (request: FastifyRequest) => string) {
  const limit = app.createRateLimit({ max, timeWindow: ATTEMPT_WINDOW_MS, keyGenerator: (request) => `${name}:${keyOf(request)}` });
  return async (request: FastifyRequest): Promise<void> => {
    let state: Awaited<ReturnType<typeof limit>>;
    try {
      state = await limit(request);
    } catch (error) {
      // The store is away: answer rather than refuse, as the request limit does (src/http/security.ts).
      request.log.warn({ err: error }, `${name} attempts not limited: the store failed`);
      return;
    }
    if (!state.isAllowed && state.isExceeded) {
      const seconds = Math.max(1, state.ttlInSeconds);
      throw new AppError('rate_limited', `Too many attempts; try again in ${Math.ceil(seconds / 60)} minutes.`, { extra: { retryAfterSeconds: seconds } });
    }
  };
}
