// Settings / Sequences (admins only): the workspace's follow-up sequences (DESIGN §13), each a name and 1–10 steps
// (wait in business days, an instruction for WRITER, review required or auto); make, edit, make default, delete.
import { useState } from 'react';
import { api, ApiError } from '../../api/client';
import type { ResponseOf } from '../../api/client';
import { Dialog } from '../../components/Dialog';
import { FormDialog } from '../../components/FormDialog';
import { useToast } from '../../components/Toast';
import { Badge, Button, EmptyState, ErrorAlert, Field, LoadingBlock } from '../../components/ui';
import { useFormSubmit } from '../../lib/forms';
import { useApiQuery } from '../../lib/query';
import { AdminOnly } from './AdminOnly';

type Sequence = ResponseOf<'get', '/api/v1/sequences'>['data'][number];
type Step = Sequence['steps'][number];

const STEPS_MAX = 10;
const newStep = (): Step => ({ waitDays: 3, instruction: 'A short bump with one new point from the call.', review: 'required' });

/** "+3, +5 business days · review required" */
function summary(steps: Step[]): string {
  const waits = steps.map((s) => `+${s.waitDays}`).join(', ');
  const reviews = new Set(steps.map((s) => s.review));
  return `${waits} business days · ${reviews.size > 1 ? 'some reviewed' : reviews.has('auto') ? 'sent without review' : 'review required'}`;
}

export function SequencesPage() {
  const toast = useToast();
  const sequences = useApiQuery(['sequences'], (signal) => api.get('/api/v1/sequences', { signal }).then((r) => r.body.data));
  const [editing, setEditing] = useState<Sequence | 'new' | null>(null);
  const [removing, setRemoving] = useState<Sequence | null>(null);

  if (sequences.error instanceof ApiError && sequences.error.status === 403) return <AdminOnly what="sequences" />;

  const act = async (what: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : `Could not ${what}.`);
    }
  };

  return (
    <>
      <div className="section-bar">
        <p className="section-bar-text">{sequences.data ? `${sequences.data.length} sequence${sequences.data.length === 1 ? '' : 's'}` : ''}</p>
        <div className="section-bar-actions">
          <Button variant="primary" icon="plus" onClick={() => setEditing('new')}>New sequence</Button>
        </div>
      </div>
      {sequences.error ? <ErrorAlert error={sequences.error} retry={sequences.reload} /> : null}
      {!sequences.data && !sequences.error && <LoadingBlock label="Loading sequences" />}
      {sequences.data?.length === 0 && (
        <EmptyState icon="plus" title="No sequences" action={<Button variant="primary" icon="plus" onClick={() => setEditing('new')}>Make one</Button>}>
          A sequence sends follow-ups in the same thread after an approved e-mail.
        </EmptyState>
      )}
      {sequences.data?.map((sequence) => (
        <section key={sequence.id} className="card" data-sequence-id={sequence.id} aria-label={sequence.name}>
          <div className="card-body">
            <div className="section-bar">
              <div>
                <p><strong>{sequence.name}</strong> {sequence.isDefault && <Badge tone="blue">Default</Badge>}</p>
                <p className="muted small">{sequence.steps.length} follow-up{sequence.steps.length === 1 ? '' : 's'}: {summary(sequence.steps)}</p>
              </div>
              <div className="section-bar-actions">
                {!sequence.isDefault && (
                  <Button size="small" variant="ghost" onClick={() => void act('make it the default', async () => {
                    await api.patch('/api/v1/sequences/{id}', { params: { id: sequence.id }, body: { isDefault: true } });
                    await sequences.reload();
                  })}>Make default</Button>
                )}
                <Button size="small" onClick={() => setEditing(sequence)}>Edit</Button>
                <Button size="small" variant="ghost" className="danger-text" onClick={() => setRemoving(sequence)}>Delete</Button>
              </div>
            </div>
            <ol className="small">
              {sequence.steps.map((step, i) => (
                <li key={i}>Follow-up {i + 2}: +{step.waitDays} business day{step.waitDays === 1 ? '' : 's'}, {step.review === 'auto' ? 'sent when due' : 'reviewed'} — {step.instruction}</li>
              ))}
            </ol>
          </div>
        </section>
      ))}
      {editing && (
        <SequenceDialog
          sequence={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={async () => {
            setEditing(null);
            await sequences.reload();
          }}
        />
      )}
      {removing && (
        <Dialog title="Delete this sequence?" size="small" onClose={() => setRemoving(null)} footer={<>
          <Button onClick={() => setRemoving(null)} autoFocus>Keep it</Button>
          <Button variant="danger" onClick={() => void act('delete the sequence', async () => {
            await api.delete('/api/v1/sequences/{id}', { params: { id: removing.id } });
            sequences.set((list) => (list ?? []).filter((s) => s.id !== removing.id));
            setRemoving(null);
          })}>Delete sequence</Button>
        </>}>
          <p>Leads already enrolled in <strong>{removing.name}</strong> keep getting its follow-ups; new approvals cannot choose it.</p>
        </Dialog>
      )}
    </>
  );
}

const FIELDS = ['name', 'steps', 'isDefault'] as const;

function SequenceDialog({ sequence, onClose, onSaved }: { sequence: Sequence | null; onClose(): void; onSaved(): Promise<void> }) {
  const [name, setName] = useState(sequence?.name ?? '');
  const [steps, setSteps] = useState<Step[]>(sequence?.steps ?? [newStep()]);
  const form = useFormSubmit({
    known: FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (!name.trim()) local.name = 'Give the sequence a name.';
      if (steps.some((s) => !s.instruction.trim())) local.steps = 'Every follow-up needs an instruction.';
      return local;
    },
    send: async () => {
      const body = { name: name.trim(), steps: steps.map((s) => ({ ...s, instruction: s.instruction.trim() })) };
      if (sequence) await api.patch('/api/v1/sequences/{id}', { params: { id: sequence.id }, body });
      else await api.post('/api/v1/sequences', { body });
      await onSaved();
    },
  });
  const change = (i: number, patch: Partial<Step>) => setSteps((list) => list.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <FormDialog title={sequence ? `Edit ${sequence.name}` : 'New sequence'} size="large" submitLabel={sequence ? 'Save' : 'Make sequence'}
      description="Each follow-up waits its business days after the previous e-mail of the thread went out." onClose={onClose} form={form}>
      <Field label="Name" error={form.errors.fields.name}>
        {(p) => <input {...p} className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={100} autoFocus />}
      </Field>
      {steps.map((step, i) => (
        <fieldset key={i} className="fieldset" aria-label={`Follow-up ${i + 2}`}>
          <legend className="field-label">Follow-up {i + 2}</legend>
          <Field label="Wait (business days)">
            {(p) => <input {...p} className="input" type="number" min={1} max={30} value={step.waitDays}
              onChange={(e) => change(i, { waitDays: Math.max(1, Math.min(30, Number(e.target.value) || 1)) })} />}
          </Field>
          <Field label="Instruction" hint="What this follow-up does, for the writer; up to 500 characters.">
            {(p) => <textarea {...p} className="input" rows={2} maxLength={500} value={step.instruction} onChange={(e) => change(i, { instruction: e.target.value })} />}
          </Field>
          <Field label="Review">
            {(p) => (
              <select {...p} className="input" value={step.review} onChange={(e) => change(i, { review: e.target.value as Step['review'] })}>
                <option value="required">A person approves it first</option>
                <option value="auto">Send it when due</option>
              </select>
            )}
          </Field>
          {steps.length > 1 && <Button size="small" variant="ghost" className="danger-text" onClick={() => setSteps((list) => list.filter((_, j) => j !== i))}>Remove follow-up {i + 2}</Button>}
        </fieldset>
      ))}
      {form.errors.fields.steps && <p className="field-error">{form.errors.fields.steps}</p>}
      {steps.length < STEPS_MAX && <Button size="small" icon="plus" onClick={() => setSteps((list) => [...list, newStep()])}>Add a follow-up</Button>}
    </FormDialog>
  );
}
