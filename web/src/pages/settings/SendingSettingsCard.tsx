// Settings / E-mail's sending rules (DESIGN §14): the send window (days and hours) in the workspace's time zone,
// each sending address's daily limit and least gap, and how many each address sent today. Saved on its own.
import { useState } from 'react';
import { api, type ResponseOf } from '../../api/client';
import { useToast } from '../../components/Toast';
import { Alert, Button, Card, ErrorAlert, Field, LoadingBlock, RelativeTime } from '../../components/ui';
import { useFormSubmit } from '../../lib/forms';
import { useApiQuery } from '../../lib/query';

type Sending = ResponseOf<'get', '/ui/api/settings/sending'>;

const DAYS = [[1, 'Mon'], [2, 'Tue'], [3, 'Wed'], [4, 'Thu'], [5, 'Fri'], [6, 'Sat'], [7, 'Sun']] as const;
const KNOWN = ['days', 'start', 'end', 'timeZone', 'dailyLimit', 'minGapSeconds'] as const;
const TIME_ZONES = typeof Intl.supportedValuesOf === 'function' ? ['UTC', ...Intl.supportedValuesOf('timeZone')] : ['UTC'];

interface SendingForm { days: number[]; start: string; end: string; timeZone: string; dailyLimit: string; minGapSeconds: string }

const formOf = (view: Sending): SendingForm => ({
  days: view.days, start: view.start, end: view.end, timeZone: view.timeZone,
  dailyLimit: String(view.dailyLimit), minGapSeconds: String(view.minGapSeconds),
});

export function SendingSettingsCard() {
  const sending = useApiQuery(['settings', 'sending'], (signal) => api.get('/ui/api/settings/sending', { signal }).then((r) => r.body));
  if (sending.error) return <ErrorAlert error={sending.error} retry={sending.reload} />;
  if (!sending.data) return <LoadingBlock label="Loading the sending rules" />;
  return <SendingForm view={sending.data} />;
}

function SendingForm({ view: initial }: { view: Sending }) {
  const toast = useToast();
  const [view, setView] = useState(initial);
  const [form, setForm] = useState(() => formOf(initial));
  const dirty = JSON.stringify(form) !== JSON.stringify(formOf(view));
  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: KNOWN,
    check: (): Record<string, string> => (form.days.length === 0 ? { days: 'Choose at least one day.' } : {}),
    send: async () => {
      const { body } = await api.put('/ui/api/settings/sending', {
        body: {
          days: form.days, start: form.start, end: form.end, timeZone: form.timeZone,
          dailyLimit: Number(form.dailyLimit), minGapSeconds: Number(form.minGapSeconds),
        },
      });
      setView(body);
      setForm(formOf(body));
      toast('The sending rules were saved.');
    },
  });
  const set = <K extends keyof SendingForm>(key: K, value: SendingForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const toggleDay = (day: number) => set('days', form.days.includes(day) ? form.days.filter((d) => d !== day) : [...form.days, day].sort());

  return (
    <form ref={formRef} onSubmit={onSubmit} noValidate className="form" aria-label="Sending rules">
      <Card title="Sending rules" titleId="mail-sending">
        <div className="form">
          {errors.form && <Alert tone="error">{errors.form}</Alert>}
          <fieldset className="fieldset">
            <legend className="field-label">Send window</legend>
            <div className="checkbox-list checkbox-list-inline">
              {DAYS.map(([day, label]) => (
                <label key={day} className="checkbox">
                  <input type="checkbox" checked={form.days.includes(day)} onChange={() => toggleDay(day)} /> {label}
                </label>
              ))}
            </div>
            {errors.fields.days && <p className="field-error">{errors.fields.days}</p>}
            <p className="small muted">Follow-ups go out only inside it, in the lead's time zone (else the workspace's). An approval can ask for the next window too.</p>
          </fieldset>
          <div className="form-row form-row-3">
            <Field label="From" error={errors.fields.start}>
              {(p) => <input {...p} className="input" type="time" value={form.start} onChange={(e) => set('start', e.target.value)} />}
            </Field>
            <Field label="Until" error={errors.fields.end}>
              {(p) => <input {...p} className="input" type="time" value={form.end === '24:00' ? '23:59' : form.end} onChange={(e) => set('end', e.target.value)} />}
            </Field>
            <Field label="Workspace time zone" error={errors.fields.timeZone}>
              {(p) => (
                <select {...p} className="input select" value={form.timeZone} onChange={(e) => set('timeZone', e.target.value)}>
                  {[...new Set([form.timeZone, ...TIME_ZONES])].map((zone) => <option key={zone} value={zone}>{zone}</option>)}
                </select>
              )}
            </Field>
          </div>
          <div className="form-row">
            <Field label="Daily limit per sender" error={errors.fields.dailyLimit} hint="1 to 2,000 e-mails a day from one address.">
              {(p) => <input {...p} className="input" type="number" min={1} max={2000} value={form.dailyLimit} onChange={(e) => set('dailyLimit', e.target.value)} />}
            </Field>
            <Field label="Least gap (seconds)" error={errors.fields.minGapSeconds} hint="Between two e-mails of one address, with a little random extra.">
              {(p) => <input {...p} className="input" type="number" min={0} max={86400} value={form.minGapSeconds} onChange={(e) => set('minGapSeconds', e.target.value)} />}
            </Field>
          </div>
          <div>
            <h3 className="field-label">Sent today</h3>
            {view.senders.length === 0
              ? <p className="small muted">No address has sent yet.</p>
              : (
                <ul className="plain-list">
                  {view.senders.map((sender) => (
                    <li key={sender.address}>
                      <strong>{sender.address}</strong>: {sender.sentToday} of {view.dailyLimit}
                      {sender.lastSentAt && <span className="small muted"> · last <RelativeTime iso={sender.lastSentAt} /></span>}
                    </li>
                  ))}
                </ul>
              )}
          </div>
          <div className="form-actions">
            <Button type="submit" variant="primary" busy={busy} disabled={!dirty}>Save sending rules</Button>
          </div>
        </div>
      </Card>
    </form>
  );
}
