// Form errors: the server's per-field messages (`errors[]` of a 400 problem) next to their fields, anything
// else above the form, and a few checks made before sending so a person hears about them at once.
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError, normaliseField } from '../api/client';

export interface FormErrors {
  /** Messages by field name. */
  fields: Record<string, string>;
  /** A message for the whole form, when the error is not about one field. */
  form: string | null;
  /** The error itself, for its code and request id. */
  error: unknown;
}

const NONE: FormErrors = { fields: {}, form: null, error: null };

/** `body/smtp/host`, `/smtp/host` or `smtp.host` → `smtp.host`. */
function nestedField(field: string): string {
  return field.replace(/^(body)?[/.]?/, '').replace(/^\//, '').replace(/\//g, '.');
}

/**
 * `known` names the fields the form shows messages under. A server's field is matched by its first segment
 * (`email` of `body/email`), or, with `nested`, by its whole dotted path (`smtp.host`), for a form of sections.
 */
/**
 * The messages of a failed request for a form showing `known` fields: the server's message for each such field under
 * it, the rest above the form. A server's field is matched by its first segment (`email` of `body/email`), or, with
 * `nested`, by its whole dotted path (`smtp.host`), for a form of sections.
 */
export function problemErrors(error: unknown, known: readonly string[], nested = false): FormErrors {
  if (!(error instanceof ApiError) || error.errors.length === 0) {
    return { fields: {}, form: error instanceof Error ? error.message : 'Something went wrong.', error };
  }
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  for (const e of error.errors) {
    const name = nested ? nestedField(e.field) : normaliseField(e.field);
    if (known.includes(name)) fields[name] ??= sentence(e.message);
    else rest.push(`${e.field}: ${e.message}`);
  }
  return { fields, form: rest.length ? rest.join('; ') : Object.keys(fields).length ? null : error.detail, error };
}

/** `known` names the fields the form shows messages under (see `problemErrors`). */
export function useFormErrors(known: readonly string[], nested = false) {
  const [errors, setErrors] = useState<FormErrors>(NONE);

  const fromError = useCallback((error: unknown) => setErrors(problemErrors(error, known, nested)),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [known.join(), nested]);

  const setFields = useCallback((fields: Record<string, string>) => setErrors({ fields, form: null, error: null }), []);
  const clear = useCallback(() => setErrors(NONE), []);
  return { errors, fromError, setFields, clear };
}

export interface FormSubmit {
  /** The field names the form shows messages under; the server's messages for other fields go above it. */
  known: readonly string[];
  /** Checks made before sending: messages by field name. Any message stops the submit. */
  check?: () => Record<string, string>;
  /** Sends the form and acts on the answer. */
  send: () => Promise<void>;
  /** Handles a failed send instead of the usual `show`: the error on the form, focus on its first invalid field. */
  failed?: (error: unknown, form: { show(error: unknown): void; fromError(error: unknown): void; clear(): void }) => void;
  /** Match the server's fields by their whole dotted path (`smtp.host`), not their first segment. */
  nested?: boolean;
}

/** A form's submit: local checks, then `send` with the form busy, then any error shown on the form. */
export function useFormSubmit({ known, check, send, failed, nested = false }: FormSubmit) {
  const formRef = useRef<HTMLFormElement>(null);
  const [busy, setBusy] = useState(false);
  const { errors, fromError, setFields, clear } = useFormErrors(known, nested);
  // Focus goes to the first invalid field once the messages are on the page: after the render that shows them,
  // never at a guessed moment before it.
  const focusPending = useRef(false);
  useEffect(() => {
    if (!focusPending.current || busy) return;
    focusPending.current = false;
    formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  });

  const show = (error: unknown) => {
    fromError(error);
    focusPending.current = true;
  };

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const local = check?.() ?? {};
    if (Object.keys(local).length) {
      setFields(local);
      focusPending.current = true;
      return;
    }
    clear();
    setBusy(true);
    try {
      await send();
    } catch (error) {
      if (failed) failed(error, { show, fromError, clear });
      else show(error);
    } finally {
      setBusy(false);
    }
  };

  return { errors, busy, formRef, onSubmit };
}

/** The API's "must be at most 200 characters" → "Must be at most 200 characters."; some get a form's own words. */
export function fieldMessage(message: string): string {
  return sentence(message);
}

function sentence(message: string): string {
  const text = message.replace(/\\"/g, '"');
  for (const [pattern, words] of FRIENDLY) {
    const match = pattern.exec(text);
    if (match) return typeof words === 'string' ? words : words(match[1] ?? '');
  }
  const first = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

const FRIENDLY: Array<[RegExp, string | ((detail: string) => string)]> = [
  [/^must be an e-mail address$/, 'Enter an e-mail address like name@company.com.'],
  // The server says what is wrong with the address ("must be an e-mail address: no @"): the form says it too.
  [/^must be an e-mail address: (.*)$/, (why) => `Enter an e-mail address like name@company.com (${why}).`],
  // A lead's website may be a bare host; a webhook's URL may not, and its form says so.
  [/^must be an http or https URL, or a host name/, 'Enter a web address such as www.example.com or https://example.com.'],
  [/^must be an (absolute URL|http or https URL)$/, 'Enter a full web address starting with http:// or https://.'],
  [/^must not be empty$|^is required$/, 'This field is required.'],
  [/is not your current password/, 'That is not your current password.'],
];

// The server's one rule for an e-mail address (src/domain/validation.ts), so that a form refuses what the API would.
export { isEmail } from '../../../src/domain/validation.ts';
