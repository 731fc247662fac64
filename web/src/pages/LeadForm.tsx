// Creating and editing a lead: name required; e-mail, company, website, status and owner optional. The server's
// messages for each field (`errors[]`) show under that field. An edit sends only the fields that changed; a field
// emptied is cleared (null).
import { Controller } from 'react-hook-form';
import { api, type RequestOf } from '../api/client';
import type { Lead, LeadStatus } from '../api/types';
import { LEAD_STATUSES } from '../api/types';
import { FormDialog } from '../components/FormDialog';
import { Field } from '../components/ui';
import { useDialogForm, type DialogForm } from '../lib/dialogForm';
import { displayName, LEAD_STATUS_LABEL } from '../lib/format';
import { fieldMessage } from '../lib/forms';
import { useMembers } from '../lib/members';
import { useSignedIn } from '../lib/session';
import { BLANK_MESSAGE, isBlank } from '../../../src/domain/validation.ts';

/** The fields in the order the form shows them: the first with the server's message gets the focus. */
const FIELDS = ['name', 'email', 'companyName', 'status', 'companyWebsite', 'assignedToUserId', 'timeZone'] as const;

interface LeadValues {
  name: string;
  email: string;
  companyName: string;
  companyWebsite: string;
  status: LeadStatus;
  /** '' for nobody. */
  assignedToUserId: string;
  /** An IANA name; '' for the workspace's zone. */
  timeZone: string;
}

/** The zones the browser knows, offered as the time zone field's suggestions; the server checks what is typed. */
const TIME_ZONES = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

const optional = (text: string) => (text.trim() ? text.trim() : null);
// The server's rule (src/domain/validation.ts), checked before sending, in the words the server would use; the other
// fields are checked by the server alone, whose 400 names each field.
const checkLead = (values: LeadValues) => (isBlank(values.name) ? { name: fieldMessage(BLANK_MESSAGE) } : {});

function LeadFields({ form }: { form: DialogForm<LeadValues> }) {
  const session = useSignedIn();
  const members = useMembers();
  const { register, fieldError } = form;
  return (
    <>
      <Field label="Name" error={fieldError('name')} required>
        {(p) => <input {...p} {...register('name')} className="input" autoComplete="off" autoFocus placeholder="Ada Lovelace" />}
      </Field>
      <Field label="E-mail" error={fieldError('email')} optional>
        {(p) => <input {...p} {...register('email')} className="input" type="email" autoComplete="off" placeholder="ada@example.com" />}
      </Field>
      <div className="form-row">
        <Field label="Company" error={fieldError('companyName')} optional>
          {(p) => <input {...p} {...register('companyName')} className="input" autoComplete="off" placeholder="Analytical Engines" />}
        </Field>
        <Field label="Status" error={fieldError('status')}>
          {(p) => (
            <select {...p} {...register('status')} className="input select">
              {LEAD_STATUSES.map((s) => <option key={s} value={s}>{LEAD_STATUS_LABEL[s]}</option>)}
            </select>
          )}
        </Field>
      </div>
      <Field
        label="Company website" error={fieldError('companyWebsite')} optional
        hint="The address research starts from, e.g. www.example.com"
      >
        {/* Text rather than type=url: a browser's url field refuses www.example.com, which leadrun stores as
            https://www.example.com. */}
        {(p) => <input {...p} {...register('companyWebsite')} className="input" type="text" inputMode="url" autoComplete="off" placeholder="www.example.com" />}
      </Field>
      <Field label="Owner" error={fieldError('assignedToUserId')} hint="The member who works on this lead.">
        {/* Controlled: its options arrive after the form opens, and an uncontrolled select would lose its choice. */}
        {(p) => (
          <Controller control={form.control} name="assignedToUserId" render={({ field }) => {
            const ownerKnown = !field.value || members.data?.some((m) => m.id === field.value);
            return (
              <select {...p} {...field} className="input select">
                <option value="">Nobody</option>
                {members.data?.map((m) => <option key={m.id} value={m.id}>{displayName(m)}{m.id === session.user.id ? ' (you)' : ''}</option>)}
                {!ownerKnown && <option value={field.value}>{members.data ? 'A former member' : 'Loading…'}</option>}
              </select>
            );
          }} />
        )}
      </Field>
      <Field label="Time zone" error={fieldError('timeZone')} optional
        hint="Where the lead works, e.g. Europe/Berlin: follow-ups go out in their working hours. Empty: the workspace's.">
        {(p) => (
          <>
            <input {...p} {...register('timeZone')} className="input" list="lead-time-zones" autoComplete="off" spellCheck={false} placeholder="Europe/Berlin" />
            <datalist id="lead-time-zones">{TIME_ZONES.map((zone) => <option key={zone} value={zone} />)}</datalist>
          </>
        )}
      </Field>
    </>
  );
}

export function NewLeadDialog({ onClose, onCreated }: { onClose(): void; onCreated(lead: Lead): void }) {
  const form = useDialogForm<LeadValues>({
    defaultValues: { name: '', email: '', companyName: '', companyWebsite: '', status: 'DISCOVERY', assignedToUserId: '', timeZone: '' },
    known: FIELDS,
    check: checkLead,
    send: async (values) => {
      const { body } = await api.post('/api/v1/leads', {
        body: {
          name: values.name.trim(),
          email: optional(values.email) ?? undefined,
          companyName: optional(values.companyName) ?? undefined,
          companyWebsite: optional(values.companyWebsite) ?? undefined,
          status: values.status,
          assignedToUserId: values.assignedToUserId || undefined,
          timeZone: optional(values.timeZone) ?? undefined,
        },
      });
      onCreated(body);
    },
  });

  return (
    <FormDialog title="New lead" description="Add the person you are selling to. A website lets runs research their company."
      submitLabel="Create lead" onClose={onClose} form={form}>
      <LeadFields form={form} />
    </FormDialog>
  );
}

type LeadUpdate = RequestOf<'patch', '/api/v1/leads/{id}'>;

/** The fields of `values` that differ from `lead`, as PATCH takes them. */
function changes(lead: Lead, values: LeadValues): LeadUpdate {
  const update: LeadUpdate = {};
  if (values.name.trim() !== lead.name) update.name = values.name.trim();
  if (optional(values.email) !== lead.email) update.email = optional(values.email);
  if (optional(values.companyName) !== lead.companyName) update.companyName = optional(values.companyName);
  if (optional(values.companyWebsite) !== lead.companyWebsite) update.companyWebsite = optional(values.companyWebsite);
  if (values.status !== lead.status) update.status = values.status;
  if ((values.assignedToUserId || null) !== lead.assignedToUserId) update.assignedToUserId = values.assignedToUserId || null;
  if (optional(values.timeZone) !== lead.timeZone) update.timeZone = optional(values.timeZone);
  return update;
}

export function EditLeadDialog({ lead, onClose, onSaved }: { lead: Lead; onClose(): void; onSaved(lead: Lead): void }) {
  const form = useDialogForm<LeadValues>({
    defaultValues: {
      name: lead.name,
      email: lead.email ?? '',
      companyName: lead.companyName ?? '',
      companyWebsite: lead.companyWebsite ?? '',
      status: lead.status,
      assignedToUserId: lead.assignedToUserId ?? '',
      timeZone: lead.timeZone ?? '',
    },
    known: FIELDS,
    check: checkLead,
    send: async (values) => {
      const update = changes(lead, values);
      if (Object.keys(update).length === 0) return onClose();
      const { body } = await api.patch('/api/v1/leads/{id}', { params: { id: lead.id }, body: update });
      onSaved(body.data);
    },
  });

  return (
    <FormDialog title={`Edit ${lead.name}`} submitLabel="Save changes" onClose={onClose} form={form}>
      <LeadFields form={form} />
    </FormDialog>
  );
}
