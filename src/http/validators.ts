// The Ajv validators of the API: one for bodies (JSON, never coerced) and one for query strings and path parameters
// (text, coerced to the schema's types). Used by buildApp() for every route, and by the lead import, whose rows are
// validated in the CPU pool against the same LeadCreate schema as POST /api/v1/leads.
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { isEmail, websiteProblem, websiteUrl } from '../domain/validation.ts';

// Unknown body fields are refused, never dropped. `verbose`: an error carries the value it is about, so that an
// e-mail address is refused saying what is wrong with it (src/http/problem.ts).
const BASE: AjvOptions = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false, verbose: true };

const uri = fullFormats.uri as (value: string) => boolean;

/**
 * The formats of leadrun's own rules, from src/domain/validation.ts, which the web UI applies too. `website`: an
 * http(s) URL or a bare host, which the domain stores as https://host; once that prefix is there it must be the
 * absolute URI it was before bare hosts were taken.
 */
function withLeadrunFormats(ajv: Ajv): Ajv {
  // One e-mail rule in the API, the domain, the configuration and the web UI: `email` (ajv-formats' own, ASCII only,
  // is replaced) and `idn-email`, the name JSON Schema gives an address that may hold more than ASCII.
  // An address over 254 characters is left to the schema's maxLength, which says so: one error, not two.
  const email = (value: string) => value.length > 254 || isEmail(value);
  ajv.addFormat('email', { type: 'string', validate: email });
  ajv.addFormat('idn-email', { type: 'string', validate: email });
  const website = (value: string) => websiteProblem(value) === null && uri(websiteUrl(value));
  ajv.addFormat('website', { type: 'string', validate: website });
  return ajv;
}

/** Bodies are JSON and are not coerced: `{"name": 42}` is refused rather than turned into "42". */
export function bodyValidator(): Ajv {
  return withLeadrunFormats(addFormats.default(new Ajv({ ...BASE, coerceTypes: false })));
}

/** Query strings and path parameters arrive as text and are coerced to their types. */
export function textValidator(): Ajv {
  return withLeadrunFormats(addFormats.default(new Ajv({ ...BASE, coerceTypes: 'array' })));
}
