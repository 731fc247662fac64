// The form of a FormDialog, kept by react-hook-form (docs/decisions/0014-form-library.md): the fields are registered
// with it, the checks made before sending are its resolver, and the server's messages for fields (a 400 problem's
// `errors[]`) are set on the fields they name. Either way the first invalid field gets the focus, the messages stay
// until the next submit (as before the library), and the form is busy while it is sent.
import { useForm, type DefaultValues, type FieldErrors, type FieldValues, type Path, type Resolver, type UseFormReturn } from 'react-hook-form';
import { problemErrors } from './forms';

export interface DialogFormOptions<V extends FieldValues> {
  defaultValues: DefaultValues<V>;
  /**
   * The server's names of the fields the form shows messages under, in the order they are shown: the first of them
   * with a message gets the focus. The server's messages for other fields go above the form.
   */
  known: readonly string[];
  /** Where the message for a server's field shows when the form names it otherwise (`durationSeconds` → `minutes`). */
  shownAt?: Readonly<Record<string, Path<V>>>;
  /** Checks made before sending: messages by field name. Any message stops the submit. */
  check?: (values: V) => Partial<Record<Path<V>, string>>;
  /** Sends the form and acts on the answer; what it throws is shown on the form. */
  send: (values: V) => Promise<void>;
}

/** What FormDialog needs of a form. */
export interface DialogFormState {
  busy: boolean;
  /** A message for the whole form, when the error is not about one of its fields. */
  formError: string | undefined;
  submit(event?: React.BaseSyntheticEvent): Promise<void>;
}

export interface DialogForm<V extends FieldValues> extends UseFormReturn<V>, DialogFormState {
  fieldError(name: Path<V>): string | undefined;
}

/** The checks as a resolver: react-hook-form shows their messages and focuses the first field with one. */
function checkResolver<V extends FieldValues>(check: (values: V) => Partial<Record<Path<V>, string>>): Resolver<V> {
  return (values) => {
    const failed = Object.entries(check(values)).filter((entry): entry is [string, string] => Boolean(entry[1]));
    if (failed.length === 0) return { values, errors: {} };
    const errors = Object.fromEntries(failed.map(([name, message]) => [name, { type: 'check', message }]));
    return { values: {}, errors: errors as FieldErrors<V> };
  };
}

export function useDialogForm<V extends FieldValues>({ defaultValues, known, shownAt = {}, check, send }: DialogFormOptions<V>): DialogForm<V> {
  const form = useForm<V>({ defaultValues, resolver: check ? checkResolver(check) : undefined, reValidateMode: 'onSubmit' });
  const { formState, setError, handleSubmit, getFieldState } = form;

  const showFailure = (error: unknown) => {
    const { fields, form: message } = problemErrors(error, known);
    let focus = true;
    for (const name of known) {
      const text = fields[name];
      if (!text) continue;
      setError(shownAt[name] ?? (name as Path<V>), { type: 'server', message: text }, { shouldFocus: focus });
      focus = false;
    }
    if (message) setError('root.server', { type: 'server', message });
  };

  const submit = handleSubmit(async (values) => {
    try {
      await send(values);
    } catch (error) {
      showFailure(error);
    }
  });

  return {
    ...form,
    // Read here, while rendering, so that the dialog renders again as they change (formState is a subscription).
    busy: formState.isSubmitting,
    formError: formState.errors.root?.server?.message,
    fieldError: (name) => getFieldState(name, formState).error?.message,
    submit,
  };
}
