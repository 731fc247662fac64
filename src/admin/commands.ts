// The admin commands of the `leadrun` program, as functions of a database. The CLI runs them directly (on
// PostgreSQL, or on an embedded database no server holds) or sends them to the running server that holds the
// embedded database (src/admin/control.ts), which runs them here.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { CpuPool } from '../cpu/pool.ts';
import type { DB } from '../db/schema.ts';
import { listAudit, writeAudit } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import { createKey, revokeKey } from '../domain/keys.ts';
import { importAuditDetails, importFile, importReader, readLeadImport, writeLeadImport } from '../domain/lead-import.ts';
import { isUuid } from '../domain/validation.ts';
import { setPassword } from '../domain/users.ts';
import { createWorkspace, getWorkspace } from '../domain/workspaces.ts';

export type AdminCommand =
  | { command: 'workspace.create'; name: string; plan?: string; adminEmail?: string | null }
  | { command: 'key.create'; workspaceId: string; name: string; scopes: string[] }
  | { command: 'key.revoke'; keyId: string }
  | { command: 'audit.list'; workspaceId: string; limit: number }
  | { command: 'user.password'; email: string; password: string }
  | {
    command: 'leads.import';
    workspaceId: string;
    format: 'csv' | 'json';
    /** The file, base64: a command travels as a line of JSON to the server that holds an embedded database. */
    content: string;
    dedupe: 'email' | null;
    dryRun: boolean;
    map: string[];
  }
  | { command: 'migrate' };

export interface AdminDeps {
  db: Kysely<DB>;
  clock: Clock;
  migrate(): Promise<string[]>;
  /** The CPU pool of the server that runs the command; without one, a file is read in this process. */
  cpu?: CpuPool | null;
}

async function requireWorkspace(db: Kysely<DB>, workspaceId: string) {
  const workspace = isUuid(workspaceId) ? await getWorkspace(db, workspaceId) : null;
  if (!workspace) throw new AppError('not_found', `There is no workspace ${workspaceId}.`);
  return workspace;
}

export async function runAdminCommand(deps: AdminDeps, input: AdminCommand): Promise<unknown> {
  const { db, clock } = deps;
  switch (input.command) {
    case 'workspace.create':
      return createWorkspace(db, { name: input.name, plan: input.plan ?? 'free', adminEmail: input.adminEmail ?? null }, clock);

    case 'key.create': {
      const workspace = await requireWorkspace(db, input.workspaceId);
      return db.transaction().execute(async (trx) => {
        const key = await createKey(trx, workspace.id, { name: input.name, scopes: input.scopes, createdByUserId: workspace.admin_user_id }, clock);
        await writeAudit(trx, {
          workspaceId: workspace.id, source: 'cli', userId: workspace.admin_user_id, action: 'key.created',
          target: { type: 'key', id: key.id }, outcome: 'success', occurredAt: clock.now(),
        });
        return { id: key.id, key: key.key, prefix: key.prefix, name: key.name, scopes: key.scopes };
      });
    }

    case 'key.revoke': {
      if (!isUuid(input.keyId)) throw new AppError('not_found', `There is no key ${input.keyId}.`);
      return db.transaction().execute(async (trx) => {
        const revoked = await revokeKey(trx, input.keyId, clock);
        if (!revoked) throw new AppError('not_found', `There is no key ${input.keyId}.`);
        await writeAudit(trx, {
          workspaceId: revoked.workspace_id, source: 'cli', action: 'key.revoked',
          target: { type: 'key', id: revoked.id }, outcome: 'success', occurredAt: clock.now(),
        });
        return { id: revoked.id, revokedAt: revoked.revoked_at?.toISOString() ?? null };
      });
    }

    case 'audit.list': {
      await requireWorkspace(db, input.workspaceId);
      return (await listAudit(db, input.workspaceId, { limit: input.limit })).items;
    }

    case 'user.password': {
      const user = await setPassword(db, input.email, input.password, clock);
      if (!user) throw new AppError('not_found', `There is no user with the e-mail ${input.email}.`);
      return { id: user.id, email: user.email, passwordSet: true };
    }

    case 'leads.import': {
      const workspace = await requireWorkspace(db, input.workspaceId);
      const file = importFile(input.format, Buffer.from(input.content, 'base64'), input.map);
      const options = { dedupe: input.dedupe, dryRun: input.dryRun };
      const rows = await readLeadImport(db, workspace.id, file, options, importReader(deps.cpu ?? null));
      return db.transaction().execute(async (trx) => {
        const result = await writeLeadImport(trx, workspace.id, rows, options, clock);
        await writeAudit(trx, {
          workspaceId: workspace.id, source: 'cli', action: 'lead.imported', outcome: 'success', occurredAt: clock.now(),
          details: importAuditDetails(file, options, result),
        });
        return result;
      });
    }

    case 'migrate':
      return { applied: await deps.migrate() };
  }
}
