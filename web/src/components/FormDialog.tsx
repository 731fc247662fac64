// The one dialog that edits something: a form in a Dialog, with Cancel and a submit button at its foot, a message for
// the whole form above the fields, and the server's messages under each field (lib/dialogForm.ts `useDialogForm`,
// whose result it takes). While the form is sent, Escape, Close and Cancel do nothing.
import { useId, type ReactNode } from 'react';
import type { DialogFormState } from '../lib/dialogForm';
import { Dialog } from './Dialog';
import { Alert, Button } from './ui';

export function FormDialog({ title, description, size, submitLabel, onClose, form, children }: {
  title: string;
  description?: ReactNode;
  size?: 'small' | 'medium' | 'large';
  submitLabel: string;
  onClose(): void;
  form: DialogFormState;
  children: ReactNode;
}) {
  const id = useId();
  const { formError, busy, submit } = form;
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
      <form id={id} onSubmit={(event) => void submit(event)} noValidate className="form">
        {formError && <Alert tone="error">{formError}</Alert>}
        {children}
      </form>
    </Dialog>
  );
}
