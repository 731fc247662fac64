// The Ajv validators of the API's schemas: one for bodies (JSON, never coerced) and one for query strings and path
// parameters (text, coerced to the schema's types), and what their issues say to a person. Used by buildApp() for every
// route, and by the lead import, whose rows are validated in the CPU pool against the same LeadCreate schema as
// POST /api/v1/leads and reported in the same words.
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FieldError } from './errors.ts';
import {
  BLANK_MESSAGE, EMAIL_MESSAGE, emailProblem, isEmail, NOT_BLANK_PATTERN, ONE_LINE_MESSAGE, ONE_LINE_PATTERN, WEBSITE_MESSAGE,
  websiteProblem, websiteUrl,
} from './validation.ts';
import { isTimeZone, TIME_ZONE_MESSAGE } from './sending/time-zones.ts';

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
  // A lead's or a workspace's zone: an IANA name the platform's Intl knows (src/domain/sending/time-zones.ts).
  ajv.addFormat('time-zone', { type: 'string', validate: isTimeZone });
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

/** A JSON pointer as a field name: `/runs/3/callId` is `runs[3].callId`. */
function fieldPath(pointer: string): string {
  return pointer.split('/').slice(1).reduce((path, segment) => {
    if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
    return path ? `${path}.${segment}` : segment;
  }, '');
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
  'time-zone': TIME_ZONE_MESSAGE,
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
