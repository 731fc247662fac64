// Creating a lead: name required; e-mail, company, website and status optional. The server's messages for each
// field (`errors[]`) show under that field.
import { useState } from 'react';
import { api } from '../api/client';
import type { Lead, LeadStatus } from '../api/types';
import { LEAD_STATUSES } from '../api/types';
import { Dialog } from '../components/Dialog';
import { Alert, Button, Field } from '../components/ui';
import { LEAD_STATUS_LABEL } from '../lib/format';
import { useFormSubmit } from '../lib/forms';

const FIELDS = ['name', 'email', 'companyName', 'companyWebsite', 'status'] as const;

export function NewLeadDialog({ onClose, onCreated }: { onClose(): void; onCreated(lead: Lead): void }) {
  const [values, setValues] = useState({ name: '', email: '', companyName: '', companyWebsite: '', status: 'DISCOVERY' as LeadStatus });
  const change = (name: keyof typeof values) => (event: { target: { value: string } }) => setValues((v) => ({ ...v, [name]: event.target.value }));
  const optional = (text: string) => (text.trim() ? text.trim() : undefined);

  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: FIELDS,
    check: (): Record<string, string> => (values.name.trim() ? {} : { name: "Enter the lead's name." }),
    send: async () => {
      const { body } = await api.post('/api/v1/leads', {
        body: {
          name: values.name.trim(),
          email: optional(values.email),
          companyName: optional(values.companyName),
          companyWebsite: optional(values.companyWebsite),
          status: values.status,
        },
      });
      onCreated(body);
    },
  });

  return (
    <Dialog
      title="New lead"
      description="Add the person you are selling to. A website lets runs research their company."
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy}>Cancel</Button>
        <Button type="submit" form="new-lead" variant="primary" busy={busy}>Create lead</Button>
      </>}
    >
      <form id="new-lead" ref={formRef} onSubmit={onSubmit} noValidate className="form">
        {errors.form && <Alert tone="error">{errors.form}</Alert>}
        <Field label="Name" error={errors.fields.name} required>
          {(p) => <input {...p} className="input" value={values.name} onChange={change('name')} autoComplete="off" autoFocus placeholder="Ada Lovelace" />}
        </Field>
        <Field label="E-mail" error={errors.fields.email} optional>
          {(p) => <input {...p} className="input" type="email" value={values.email} onChange={change('email')} autoComplete="off" placeholder="ada@example.com" />}
        </Field>
        <div className="form-row">
          <Field label="Company" error={errors.fields.companyName} optional>
            {(p) => <input {...p} className="input" value={values.companyName} onChange={change('companyName')} autoComplete="off" placeholder="Analytical Engines" />}
          </Field>
          <Field label="Status" error={errors.fields.status}>
            {(p) => (
              <select {...p} className="input select" value={values.status} onChange={change('status')}>
                {LEAD_STATUSES.map((s) => <option key={s} value={s}>{LEAD_STATUS_LABEL[s]}</option>)}
              </select>
            )}
          </Field>
        </div>
        <Field label="Company website" error={errors.fields.companyWebsite} optional hint="The address research starts from, e.g. https://example.com">
          {(p) => <input {...p} className="input" type="url" value={values.companyWebsite} onChange={change('companyWebsite')} autoComplete="off" placeholder="https://" />}
        </Field>
      </form>
    </Dialog>
  );
}
