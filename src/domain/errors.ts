// One error type for the whole product, with a closed list of codes. The HTTP layer maps each code to its
// status in one place (src/http/problem.ts); domain code never speaks of statuses.

import { ERROR_CODES } from '../schemas/errors.ts';

export { ERROR_CODES };

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly errors: FieldError[] | undefined;
  /** Extra members of the problem document (for example `limit`, `used`, `resetsAt`). */
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { errors?: FieldError[]; extra?: Record<string, unknown> } = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.errors = options.errors;
    this.extra = options.extra;
  }
}

export const notFound = (what: string, field?: string): AppError =>
  new AppError('not_found', `${what} was not found.`, field ? { errors: [{ field, message: `no such ${what.toLowerCase()}` }] } : {});

export const invalid = (field: string, message: string): AppError =>
  new AppError('invalid_request', `The request is invalid: ${field} ${message}.`, { errors: [{ field, message }] });
