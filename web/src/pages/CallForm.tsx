// Adding a call: paste its transcript; a title, when it took place and how long it lasted are optional.
import { api } from '../api/client';
import type { Call } from '../api/types';
import { FormDialog } from '../components/FormDialog';
import { Field } from '../components/ui';
import { useDialogForm } from '../lib/dialogForm';
import { formatNumber } from '../lib/format';

/** The fields in the order the form shows them: the first with the server's message gets the focus. */
const FIELDS = ['title', 'occurredAt', 'durationSeconds', 'transcript'] as const;
const MAX_TRANSCRIPT = 200_000;

interface CallValues {
  title: string;
  occurredAt: string;
  /** The length as typed, in minutes; sent as `durationSeconds`. */
  minutes: string;
  transcript: string;
}

const minutesOf = (values: CallValues) => (values.minutes.trim() ? Number(values.minutes) : null);

function checkCall(values: CallValues): Partial<Record<keyof CallValues, string>> {
  const local: Partial<Record<keyof CallValues, string>> = {};
  const minutes = minutesOf(values);
  if (!values.transcript.trim()) local.transcript = 'Paste the transcript of the call.';
  else if (values.transcript.length > MAX_TRANSCRIPT) local.transcript = `A transcript can be at most ${formatNumber(MAX_TRANSCRIPT)} characters.`;
  if (minutes !== null && (!Number.isFinite(minutes) || minutes < 0 || minutes > 1440)) local.minutes = 'Enter the length in minutes, from 0 to 1440.';
  return local;
}

export function AddCallDialog({ leadId, leadName, onClose, onAdded }: { leadId: string; leadName: string; onClose(): void; onAdded(call: Call): void }) {
  const form = useDialogForm<CallValues>({
    defaultValues: { title: '', occurredAt: '', minutes: '', transcript: '' },
    known: FIELDS,
    shownAt: { durationSeconds: 'minutes' },
    check: checkCall,
    send: async (values) => {
      const minutes = minutesOf(values);
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
  const { register, fieldError } = form;
  const length = form.watch('transcript').length;
  const over = length - MAX_TRANSCRIPT;

  return (
    <FormDialog title="Add a call" description={`Paste what was said with ${leadName}. The analysis picks out pains, objections and buying signals.`}
      size="large" submitLabel="Add call" onClose={onClose} form={form}>
        <div className="form-row form-row-3">
          <Field label="Title" error={fieldError('title')} optional>
            {(p) => <input {...p} {...register('title')} className="input" placeholder="Discovery call" autoComplete="off" />}
          </Field>
          <Field label="When" error={fieldError('occurredAt')} optional>
            {(p) => <input {...p} {...register('occurredAt')} className="input" type="datetime-local" />}
          </Field>
          <Field label="Length in minutes" error={fieldError('minutes')} optional>
            {(p) => <input {...p} {...register('minutes')} className="input" type="number" min={0} max={1440} inputMode="numeric" />}
          </Field>
        </div>
        <Field
          label="Transcript"
          error={fieldError('transcript')}
          required
          hint="One speaker turn per line reads best, e.g. “Ada: Our reporting takes four days.”"
          counter={<span className={over > 0 ? 'field-count-over' : undefined}>
            {formatNumber(length)} / {formatNumber(MAX_TRANSCRIPT)} characters{over > 0 && ` · ${formatNumber(over)} too many`}
          </span>}
        >
          {(p) => <textarea {...p} {...register('transcript')} className="input textarea transcript-input" rows={12} autoFocus spellCheck={false} />}
        </Field>
    </FormDialog>
  );
}
