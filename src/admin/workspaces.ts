// The workspace an admin command's `--workspace` names: its id, or its exact name. Every command that takes
// `--workspace` resolves it here, so that each accepts the same things and refuses them in the same words.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { AppError } from '../domain/errors.ts';
import { isUuid } from '../domain/validation.ts';
import { listWorkspaces, type WorkspaceSummary } from '../domain/workspaces/workspaces.ts';

/**
 * The workspace with this id, or else the one workspace with exactly this name (names are not unique: two
 * workspaces of one name are told apart by id). Throws `not_found` or, for an ambiguous name, `invalid_request`.
 */
export async function resolveWorkspace(db: Kysely<DB>, idOrName: string): Promise<WorkspaceSummary> {
  const ref = idOrName.trim();
  if (isUuid(ref)) {
    const [byId] = await listWorkspaces(db, { id: ref.toLowerCase() });
    if (byId) return byId;
  }
  // Two are enough to know that a name is ambiguous.
  const named = await listWorkspaces(db, { name: ref, limit: 2 });
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    throw new AppError('invalid_request', `More than one workspace is named "${ref}"; give its id instead (leadrun workspace list shows them).`,
      { errors: [{ field: 'workspace', message: 'names more than one workspace' }] });
  }
  throw new AppError('not_found', `There is no workspace with the id or name "${ref}" (leadrun workspace list shows them).`);
}
