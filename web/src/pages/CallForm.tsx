// Adding a call: paste its transcript; a title, when it took place and how long it lasted are optional.
import { useState } from 'react';
import { api } from '../api/client';
import type { Call } from '../api/types';
import { FormDialog } from '../components/FormDialog';
import { Field } from '../components/ui';
import { formatNumber } from '../lib/format';
import { useFormSubmit } from '../lib/forms';

const FIELDS = ['transcript', 'title', 'occurredAt', 'durationSeconds'] as const;
const MAX_TRANSCRIPT = 200_000;

export function AddCallDialog({ leadId, leadName, onClose, onAdded }: { leadId: string; leadName: string; onClose(): void; onAdded(call: Call): void }) {
  const [values, setValues] = useState({ title: '', occurredAt: '', minutes: '', transcript: '' });
  const change = (name: keyof typeof values) => (event: { target: { value: string } }) => setValues((v) => ({ ...v, [name]: event.target.value }));
  const minutes = values.minutes.trim() ? Number(values.minutes) : null;
  const over = values.transcript.length - MAX_TRANSCRIPT;

  const form = useFormSubmit({
    known: FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (!values.transcript.trim()) local.transcript = 'Paste the transcript of the call.';
      else if (values.transcript.length > MAX_TRANSCRIPT) local.transcript = `A transcript can be at most ${formatNumber(MAX_TRANSCRIPT)} characters.`;
      if (minutes !== null && (!Number.isFinite(minutes) || minutes < 0 || minutes > 1440)) local.durationSeconds = 'Enter the length in minutes, from 0 to 1440.';
      return local;
    },
    send: async () => {
      const { body } = await api.post('/api/v1/leads/{leadId}/calls', {
        params: { leadId },
        body: {
          transcript: values.transcript,
          title: values.title.trim() || undefined,
          occurredAt: values.occurredAt ? new Date(values.occurredAt).toISOString() : undefined,
          durationSeconds: minutes === null ? undefined : Math.round(minutes * 60),
        },
      });
      onAdded(body);
    },
  });

  return (
    <FormDialog title="Add a call" description={`Paste what was said with ${leadName}. The analysis picks out pains, objections and buying signals.`}
      size="large" submitLabel="Add call" onClose={onClose} form={form}>
        <div className="form-row form-row-3">
          <Field label="Title" error={form.errors.fields.title} optional>
            {(p) => <input {...p} className="input" value={values.title} onChange={change('title')} placeholder="Discovery call" autoComplete="off" />}
          </Field>
          <Field label="When" error={form.errors.fields.occurredAt} optional>
            {(p) => <input {...p} className="input" type="datetime-local" value={values.occurredAt} onChange={change('occurredAt')} />}
          </Field>
          <Field label="Length in minutes" error={form.errors.fields.durationSeconds} optional>
            {(p) => <input {...p} className="input" type="number" min={0} max={1440} inputMode="numeric" value={values.minutes} onChange={change('minutes')} />}
          </Field>
        </div>
        <Field
          label="Transcript"
          error={form.errors.fields.transcript}
          required
          hint="One speaker turn per line reads best, e.g. “Ada: Our reporting takes four days.”"
          counter={<span className={over > 0 ? 'field-count-over' : undefined}>
            {formatNumber(values.transcript.length)} / {formatNumber(MAX_TRANSCRIPT)} characters{over > 0 && ` · ${formatNumber(over)} too many`}
          </span>}
        >
          {(p) => <textarea {...p} className="input textarea transcript-input" rows={12} value={values.transcript} onChange={change('transcript')} autoFocus spellCheck={false} />}
        </Field>
    </FormDialog>
  );
}
