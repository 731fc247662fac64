// A workspace's follow-up sequences (DESIGN §13): made, read, changed and deleted by its admins (or keys with the
// sequences scopes). Every query is bounded by the workspace: another workspace's sequence is "not found". One is
// the default, which an approval that names none enrols in; a sequence's steps are copied into each enrolment, so a
// change here reaches only the enrolments made after it.
import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, SequencesTable } from '../../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { isUuid } from '../validation.ts';
import { SEQUENCES_MAX } from '../../schemas/sequences.ts';

export interface SequenceStep {
  waitDays: number;
  instruction: string;
  review: 'required' | 'auto';
}

export interface Sequence {
  id: string;
  name: string;
  steps: SequenceStep[];
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
}


/** The sequence every workspace starts with: two follow-ups, +3 and +5 business days, each reviewed by a person. */
export const DEFAULT_SEQUENCE = {
  name: 'Two follow-ups',
  steps: [
    { waitDays: 3, instruction: 'A short bump: one new point from the call, and the same ask.', review: 'required' },
    { waitDays: 5, instruction: 'A last, brief note that leaves the door open.', review: 'required' },
  ] as SequenceStep[],
};

const toSequence = (row: Selectable<SequencesTable>): Sequence => ({
  id: row.id, name: row.name, steps: row.steps as SequenceStep[], isDefault: row.is_default,
  createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString(),
});

/** Makes the workspace's default sequence; in the workspace's creation. */
export async function createDefaultSequence(trx: Kysely<DB>, workspaceId: string, now: Date): Promise<void> {
  await trx.insertInto('sequences').values({
    id: randomUUID(), workspace_id: workspaceId, name: DEFAULT_SEQUENCE.name, steps: JSON.stringify(DEFAULT_SEQUENCE.steps),
    is_default: true, created_at: now, updated_at: now,
  }).execute();
}

export async function listSequences(db: Kysely<DB>, workspaceId: string): Promise<Sequence[]> {
  const rows = await db.selectFrom('sequences').selectAll().where('workspace_id', '=', workspaceId)
    .orderBy('created_at').orderBy('id').limit(SEQUENCES_MAX).execute();
  return rows.map(toSequence);
}

export async function getSequence(db: Kysely<DB>, workspaceId: string, id: string): Promise<Sequence | null> {
  if (!isUuid(id)) return null;
  const row = await db.selectFrom('sequences').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row ? toSequence(row) : null;
}

/** The sequence an approval enrols in: the one named (404 naming `sequenceId` when it is not the workspace's), or the default. */
export async function sequenceToEnrol(trx: Kysely<DB>, workspaceId: string, id: string | undefined): Promise<Sequence | null> {
  if (id === undefined) {
    const row = await trx.selectFrom('sequences').selectAll().where('workspace_id', '=', workspaceId).where('is_default', '=', true).executeTakeFirst();
    return row ? toSequence(row) : null;
  }
  const found = await getSequence(trx, workspaceId, id);
  if (!found) throw notFound('Sequence', 'sequenceId');
  return found;
}

/** The workspace's sequences are changed one at a time: the default and the count stay exact under races. */
async function lockWorkspace(trx: Kysely<DB>, workspaceId: string): Promise<void> {
  await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().executeTakeFirst();
}

async function clearDefault(trx: Kysely<DB>, workspaceId: string, now: Date): Promise<void> {
  await trx.updateTable('sequences').set({ is_default: false, updated_at: now })
    .where('workspace_id', '=', workspaceId).where('is_default', '=', true).execute();
}

export async function createSequence(
  trx: Kysely<DB>, workspaceId: string, input: { name: string; steps: SequenceStep[]; isDefault?: boolean }, clock: Clock,
): Promise<Sequence> {
  await lockWorkspace(trx, workspaceId);
  const { count } = await trx.selectFrom('sequences').select((eb) => eb.fn.countAll<string>().as('count'))
    .where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  if (Number(count) >= SEQUENCES_MAX) {
    throw new AppError('invalid_state', `The workspace has ${SEQUENCES_MAX} sequences, as many as it may: delete one first.`);
  }
  const now = clock.now();
  // The workspace's first sequence (after its default was deleted) becomes the default.
  const isDefault = input.isDefault === true || Number(count) === 0;
  if (isDefault) await clearDefault(trx, workspaceId, now);
  const row = await trx.insertInto('sequences').values({
    id: randomUUID(), workspace_id: workspaceId, name: input.name.trim(), steps: JSON.stringify(stepsOf(input.steps)),
    is_default: isDefault, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return toSequence(row);
}

export async function updateSequence(
  trx: Kysely<DB>, workspaceId: string, id: string, input: { name?: string; steps?: SequenceStep[]; isDefault?: true }, clock: Clock,
): Promise<Sequence> {
  await lockWorkspace(trx, workspaceId);
  if (!(await getSequence(trx, workspaceId, id))) throw notFound('Sequence');
  const now = clock.now();
  if (input.isDefault) await clearDefault(trx, workspaceId, now);
  const row = await trx.updateTable('sequences').set({
    updated_at: now,
    ...(input.name !== undefined ? { name: input.name.trim() } : {}),
    ...(input.steps !== undefined ? { steps: JSON.stringify(stepsOf(input.steps)) } : {}),
    ...(input.isDefault ? { is_default: true } : {}),
  }).where('workspace_id', '=', workspaceId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  return toSequence(row);
}

/**
 * Deletes the sequence. Enrolments made from it keep their copy of its steps and go on; the default cannot be
 * deleted while others exist (make another the default first), so that an approval naming none still knows where to go.
 */
export async function deleteSequence(trx: Kysely<DB>, workspaceId: string, id: string): Promise<void> {
  await lockWorkspace(trx, workspaceId);
  const found = await getSequence(trx, workspaceId, id);
  if (!found) throw notFound('Sequence');
  if (found.isDefault) {
    const other = await trx.selectFrom('sequences').select('id').where('workspace_id', '=', workspaceId).where('id', '!=', id).executeTakeFirst();
    if (other) throw new AppError('invalid_state', 'The default sequence cannot be deleted while others exist: make another one the default first.');
  }
  await trx.deleteFrom('sequences').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

/** The steps as stored: the fields the schema names, the instruction trimmed. */
function stepsOf(steps: SequenceStep[]): SequenceStep[] {
  return steps.map((s) => ({ waitDays: s.waitDays, instruction: s.instruction.trim(), review: s.review }));
}

