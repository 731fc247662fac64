// The one dialog that edits something: a form in a Dialog, with Cancel and a submit button at its foot, a message for
// the whole form above the fields, and the server's messages under each field (lib/forms.ts `useFormSubmit`, whose
// result it takes). While the form is sent, Escape, Close and Cancel do nothing.
import { useId, type ReactNode } from 'react';
import type { FormErrors } from '../lib/forms';
import { Dialog } from './Dialog';
import { Alert, Button } from './ui';

export interface DialogForm {
  errors: FormErrors;
  busy: boolean;
  formRef: React.RefObject<HTMLFormElement | null>;
  onSubmit(event: React.FormEvent): void;
}

export function FormDialog({ title, description, size, submitLabel, onClose, form, children }: {
  title: string;
  description?: ReactNode;
  size?: 'small' | 'medium' | 'large';
  submitLabel: string;
  onClose(): void;
  form: DialogForm;
  children: ReactNode;
}) {
  const id = useId();
  const { errors, busy, formRef, onSubmit } = form;
  return (
    <Dialog
      title={title}
      description={description}
      onClose={onClose}
      busy={busy}
      size={size}
      footer={<>
        <Button onClick={onClose} disabled={busy}>Cancel</Button>
        <Button type="submit" form={id} variant="primary" busy={busy}>{submitLabel}</Button>
      </>}
    >
      <form id={id} ref={formRef} onSubmit={onSubmit} noValidate className="form">
        {errors.form && <Alert tone="error">{errors.form}</Alert>}
        {children}
      </form>
    </Dialog>
  );
}
