// Settings / Sequences (admins only): the workspace's follow-up sequences (DESIGN §13), each a name and 1–10 steps
// (wait in business days, an instruction for WRITER, review required or auto); make, edit, make default, delete.
import { useState } from 'react';
import { Controller, useFieldArray } from 'react-hook-form';
import { api } from '../../api/client';
import type { ResponseOf } from '../../api/client';
import { FormDialog } from '../../components/FormDialog';
import { Badge, Button, EmptyState, Field } from '../../components/ui';
import { useDialogForm } from '../../lib/dialogForm';
import { useApiQuery } from '../../lib/query';
import { CardList, ConfirmDelete, ListCard, useToastOnFailure } from './CardList';

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
  const sequences = useApiQuery(['sequences'], (signal) => api.get('/api/v1/sequences', { signal }).then((r) => r.body.data));
  const act = useToastOnFailure();
  const [editing, setEditing] = useState<Sequence | 'new' | null>(null);
  const [removing, setRemoving] = useState<Sequence | null>(null);

  return (
    <>
      <CardList
        list={sequences}
        noun={['sequence', 'sequences']}
        what="sequences"
        actions={<Button variant="primary" icon="plus" onClick={() => setEditing('new')}>New sequence</Button>}
        empty={(
          <EmptyState icon="plus" title="No sequences" action={<Button variant="primary" icon="plus" onClick={() => setEditing('new')}>Make one</Button>}>
            A sequence sends follow-ups in the same thread after an approved e-mail.
          </EmptyState>
        )}
      >
        {(sequence) => (
          <ListCard
            key={sequence.id}
            label={sequence.name}
            attributes={{ 'data-sequence-id': sequence.id }}
            summary={<>
              <p><strong>{sequence.name}</strong> {sequence.isDefault && <Badge tone="blue">Default</Badge>}</p>
              <p className="muted small">{sequence.steps.length} follow-up{sequence.steps.length === 1 ? '' : 's'}: {summary(sequence.steps)}</p>
            </>}
            actions={<>
              {!sequence.isDefault && (
                <Button size="small" variant="ghost" onClick={() => void act('make it the default', async () => {
                  await api.patch('/api/v1/sequences/{id}', { params: { id: sequence.id }, body: { isDefault: true } });
                  await sequences.reload();
                })}>Make default</Button>
              )}
              <Button size="small" onClick={() => setEditing(sequence)}>Edit</Button>
              <Button size="small" variant="ghost" className="danger-text" onClick={() => setRemoving(sequence)}>Delete</Button>
            </>}
          >
            <ol className="small">
              {sequence.steps.map((step, i) => (
                <li key={i}>Follow-up {i + 2}: +{step.waitDays} business day{step.waitDays === 1 ? '' : 's'}, {step.review === 'auto' ? 'sent when due' : 'reviewed'} — {step.instruction}</li>
              ))}
            </ol>
          </ListCard>
        )}
      </CardList>
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
        <ConfirmDelete title="Delete this sequence?" confirm="Delete sequence" onClose={() => setRemoving(null)} onConfirm={() => void act('delete the sequence', async () => {
          await api.delete('/api/v1/sequences/{id}', { params: { id: removing.id } });
          sequences.set((list) => (list ?? []).filter((s) => s.id !== removing.id));
          setRemoving(null);
        })}>
          <p>Leads already enrolled in <strong>{removing.name}</strong> keep getting its follow-ups; new approvals cannot choose it.</p>
        </ConfirmDelete>
      )}
    </>
  );
}

const FIELDS = ['name', 'steps', 'isDefault'] as const;

interface SequenceValues {
  name: string;
  steps: Step[];
}

function checkSequence(values: SequenceValues): Partial<Record<keyof SequenceValues, string>> {
  const local: Partial<Record<keyof SequenceValues, string>> = {};
  if (!values.name.trim()) local.name = 'Give the sequence a name.';
  if (values.steps.some((s) => !s.instruction.trim())) local.steps = 'Every follow-up needs an instruction.';
  return local;
}

const clampWait = (value: string) => Math.max(1, Math.min(30, Number(value) || 1));

function SequenceDialog({ sequence, onClose, onSaved }: { sequence: Sequence | null; onClose(): void; onSaved(): Promise<void> }) {
  const form = useDialogForm<SequenceValues>({
    defaultValues: { name: sequence?.name ?? '', steps: sequence?.steps ?? [newStep()] },
    known: FIELDS,
    check: checkSequence,
    send: async (values) => {
      const body = { name: values.name.trim(), steps: values.steps.map((s) => ({ ...s, instruction: s.instruction.trim() })) };
      if (sequence) await api.patch('/api/v1/sequences/{id}', { params: { id: sequence.id }, body });
      else await api.post('/api/v1/sequences', { body });
      await onSaved();
    },
  });
  const { register, fieldError, control } = form;
  const steps = useFieldArray({ control, name: 'steps' });
  return (
    <FormDialog title={sequence ? `Edit ${sequence.name}` : 'New sequence'} size="large" submitLabel={sequence ? 'Save' : 'Make sequence'}
      description="Each follow-up waits its business days after the previous e-mail of the thread went out." onClose={onClose} form={form}>
      <Field label="Name" error={fieldError('name')}>
        {(p) => <input {...p} {...register('name')} className="input" maxLength={100} autoFocus />}
      </Field>
      {steps.fields.map((step, i) => (
        <fieldset key={step.id} className="fieldset" aria-label={`Follow-up ${i + 2}`}>
          <legend className="field-label">Follow-up {i + 2}</legend>
          <Field label="Wait (business days)">
            {(p) => (
              <Controller control={control} name={`steps.${i}.waitDays`} render={({ field }) => (
                <input {...p} {...field} className="input" type="number" min={1} max={30} onChange={(e) => field.onChange(clampWait(e.target.value))} />
              )} />
            )}
          </Field>
          <Field label="Instruction" hint="What this follow-up does, for the writer; up to 500 characters.">
            {(p) => <textarea {...p} {...register(`steps.${i}.instruction`)} className="input" rows={2} maxLength={500} />}
          </Field>
          <Field label="Review">
            {(p) => (
              <select {...p} {...register(`steps.${i}.review`)} className="input">
                <option value="required">A person approves it first</option>
                <option value="auto">Send it when due</option>
              </select>
            )}
          </Field>
          {steps.fields.length > 1 && <Button size="small" variant="ghost" className="danger-text" onClick={() => steps.remove(i)}>Remove follow-up {i + 2}</Button>}
        </fieldset>
      ))}
      {fieldError('steps') && <p className="field-error">{fieldError('steps')}</p>}
      {steps.fields.length < STEPS_MAX && <Button size="small" icon="plus" onClick={() => steps.append(newStep(), { shouldFocus: false })}>Add a follow-up</Button>}
    </FormDialog>
  );
}
