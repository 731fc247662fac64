// The Ajv validators of the API: one for bodies (JSON, never coerced) and one for query strings and path parameters
// (text, coerced to the schema's types). Used by buildApp() for every route, and by the lead import, whose rows are
// validated in the CPU pool against the same LeadCreate schema as POST /api/v1/leads.
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';

// Unknown body fields are refused, never dropped.
const BASE: AjvOptions = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

/** Bodies are JSON and are not coerced: `{"name": 42}` is refused rather than turned into "42". */
export function bodyValidator(): Ajv {
  return addFormats.default(new Ajv({ ...BASE, coerceTypes: false }));
}

/** Query strings and path parameters arrive as text and are coerced to their types. */
export function textValidator(): Ajv {
  return addFormats.default(new Ajv({ ...BASE, coerceTypes: 'array' }));
}
