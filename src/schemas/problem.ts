// The problem document (RFC 9457) every error answer carries; `problem()` in common.ts refers to it by its $id.
import { Type } from 'typebox';
import { ERROR_CODES } from './errors.ts';
import { RUN_STATUSES } from './runs.ts';
import { Int32, MESSAGE_MAX, Timestamp } from './common.ts';

export const Problem = Type.Object({
  type: Type.String({ maxLength: 2048, description: 'A URI naming the kind of problem.' }),
  title: Type.String({ maxLength: 200 }),
  status: Int32({ minimum: 400, maximum: 599 }),
  detail: Type.String({ maxLength: MESSAGE_MAX, description: 'What went wrong, for a person.' }),
  code: Type.Enum(ERROR_CODES, { description: 'A stable snake_case word to branch on; the list is closed.' }),
  requestId: Type.String({ maxLength: 128, description: 'The X-Request-Id of the request, to quote when asking for help.' }),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String({ maxLength: 1000 }), message: Type.String({ maxLength: MESSAGE_MAX }) }), {
    maxItems: 50, description: 'For a request that failed validation: what is wrong with each field, the first 50 at most.',
  })),
  errorCount: Type.Optional(Int32({ minimum: 0, description: 'How many entries `errors` would have in all.' })),
  requiredScope: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Optional(Int32({ minimum: 0 })),
  used: Type.Optional(Int32({ minimum: 0 })),
  resetsAt: Type.Optional(Timestamp()),
  runStatus: Type.Optional(Type.Enum(RUN_STATUSES, { description: 'For invalid_state: the status the run is in.' })),
}, { $id: 'Problem', description: 'An RFC 9457 problem document (application/problem+json).' });
