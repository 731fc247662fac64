// The admin commands of the `leadrun` program, as functions of a database. The CLI runs them directly (on
// PostgreSQL, or on an embedded database no server holds) or sends them to the running server that holds the
// embedded database (src/admin/control.ts), which runs them here.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { CpuPool } from '../cpu/pool.ts';
import type { DB } from '../db/schema.ts';
import { listAudit, writeAudit } from '../domain/audit/audit.ts';
import { AppError } from '../domain/errors.ts';
import { createKey, revokeKey, SCOPES } from '../domain/keys/keys.ts';
import { importAuditDetails, importFile, importReader, readLeadImport, writeLeadImport } from '../domain/leads/import.ts';
import { isUuid } from '../domain/validation.ts';
import { setPassword, setUpOrFindInstallation } from '../domain/members/users.ts';
import { createWorkspace, listWorkspaces } from '../domain/workspaces/workspaces.ts';
import { checkEndpointUrl, createEndpoint } from '../domain/webhooks/endpoints.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/events.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { resolveWorkspace } from './workspaces.ts';

/** An admin command. `workspace` is a workspace's id or its exact name (src/admin/workspaces.ts). */
export type AdminCommand =
  | { command: 'setup'; name: string; plan?: string; adminEmail: string }
  | { command: 'workspace.create'; name: string; plan?: string; adminEmail?: string | null }
  | { command: 'workspace.list' }
  | { command: 'key.create'; workspace: string; name: string; scopes: string[]; replace?: boolean }
  | { command: 'key.revoke'; keyId: string }
  | { command: 'audit.list'; workspace: string; limit: number }
  | { command: 'user.password'; email: string; password: string; workspace?: string | null }
  | {
    command: 'leads.import';
    workspace: string;
    format: 'csv' | 'json';
    /** The file, base64: a command travels as a line of JSON to the server that holds an embedded database. */
    content: string;
    dedupe: 'email' | null;
    dryRun: boolean;
    map: string[];
    /** `VALUE:STATUS` entries: a status value of the file read as a lead status (absent from an older client). */
    statusMap?: string[];
  }
  | { command: 'webhook.create'; workspace: string; url: string; events: string[]; description?: string | null }
  | { command: 'migrate' };

export interface AdminDeps {
  db: Kysely<DB>;
  clock: Clock;
  migrate(): Promise<string[]>;
  /** The CPU pool of the server that runs the command; without one, a file is read in this process. */
  cpu?: CpuPool | null;
  /** The installation's key for stored secrets (a webhook endpoint's signing secret). */
  secrets?: () => SecretBox;
  /** ALLOW_PRIVATE_HOSTS: whether a webhook endpoint may be on a private address. */
  allowPrivateHosts?: boolean;
}

/**
 * A new workspace's admin e-mail that is someone's already: refused before anything is made, in words that say
 * whose it is and what to do instead. Whoever runs the CLI sees every workspace, so this tells them nothing new;
 * it keeps `leadrun user password --email E`, which the answer suggests, enough to give that admin a password
 * (an address in several workspaces needs --workspace too).
 */
async function refuseTakenEmail(db: Kysely<DB>, adminEmail: string): Promise<void> {
  const email = adminEmail.trim().toLowerCase();
  const user = await db.selectFrom('users as u').innerJoin('workspaces as w', 'w.id', 'u.workspace_id')
    .select(['u.role', 'w.id', 'w.name']).where(sql<string>`lower(u.email)`, '=', email).executeTakeFirst();
  if (!user) return;
  throw new AppError('invalid_request',
    `${email} is already ${user.role === 'ADMIN' ? 'an admin' : 'a member'} of workspace ${user.id} ("${user.name}"): use that workspace `
    + `(leadrun key create --workspace ${user.id} ...), or give another --admin-email.`,
    { errors: [{ field: 'adminEmail', message: 'is already in use' }] });
}

export async function runAdminCommand(deps: AdminDeps, input: AdminCommand): Promise<unknown> {
  const { db, clock } = deps;
  // Whoever runs a command is not a user of leadrun's: its entries name no user (key.created names the admin, to
  // whom the key is attributed).
  const auditCreated = (trx: Kysely<DB>, workspace: { id: string }) => writeAudit(trx, {
    workspaceId: workspace.id, source: 'cli', action: 'workspace.created',
    target: { type: 'workspace', id: workspace.id }, outcome: 'success', occurredAt: clock.now(),
  });
  switch (input.command) {
    case 'setup':
      return db.transaction().execute(async (trx) => {
        const { workspace, created } = await setUpOrFindInstallation(trx, { workspaceName: input.name, plan: input.plan ?? 'free', adminEmail: input.adminEmail }, clock);
        if (created) await auditCreated(trx, workspace);
        return { ...workspace, created };
      });

    case 'workspace.create': {
      if (input.adminEmail) await refuseTakenEmail(db, input.adminEmail);
      return db.transaction().execute(async (trx) => {
        const workspace = await createWorkspace(trx, { name: input.name, plan: input.plan ?? 'free', adminEmail: input.adminEmail ?? null }, clock);
        await auditCreated(trx, workspace);
        return workspace;
      });
    }

    case 'workspace.list':
      return listWorkspaces(db);

    case 'key.create': {
      const workspace = await resolveWorkspace(db, input.workspace);
      return db.transaction().execute(async (trx) => {
        // --replace: the keys an earlier run of the same script made go, each revoked and audited as one is by hand.
        const earlier = input.replace
          ? await trx.selectFrom('api_keys').select('id')
            .where('workspace_id', '=', workspace.id).where('name', '=', input.name).where('revoked_at', 'is', null)
            .execute()
          : [];
        for (const { id } of earlier) {
          await revokeKey(trx, id, clock, workspace.id);
          await writeAudit(trx, {
            workspaceId: workspace.id, source: 'cli', action: 'key.revoked', target: { type: 'key', id }, outcome: 'success',
            occurredAt: clock.now(),
          });
        }
        const key = await createKey(trx, workspace.id, { name: input.name, scopes: input.scopes, createdByUserId: workspace.adminUserId }, clock);
        await writeAudit(trx, {
          workspaceId: workspace.id, source: 'cli', userId: workspace.adminUserId, action: 'key.created',
          target: { type: 'key', id: key.id }, outcome: 'success', occurredAt: clock.now(),
        });
        const revoked = earlier.map((k) => k.id);
        return { id: key.id, key: key.key, prefix: key.prefix, name: key.name, scopes: key.scopes, revoked };
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
      const workspace = await resolveWorkspace(db, input.workspace);
      return (await listAudit(db, workspace.id, { limit: input.limit })).items;
    }

    case 'user.password':
      return db.transaction().execute(async (trx) => {
        const named = input.workspace ? (await resolveWorkspace(trx, input.workspace)).id : null;
        const user = await setPassword(trx, input.email, input.password, clock, named);
        const where = input.workspace ? ` in ${input.workspace}` : '';
        if (!user) throw new AppError('not_found', `There is no user with the e-mail ${input.email}${where}.`);
        const { workspace_id: workspaceId } = await trx.selectFrom('users').select('workspace_id').where('id', '=', user.id).executeTakeFirstOrThrow();
        await writeAudit(trx, {
          workspaceId, source: 'cli', action: 'user.password_set', target: { type: 'user', id: user.id }, outcome: 'success', occurredAt: clock.now(),
        });
        return { id: user.id, email: user.email, passwordSet: true };
      });

    case 'leads.import': {
      const workspace = await resolveWorkspace(db, input.workspace);
      const file = importFile(input.format, Buffer.from(input.content, 'base64'), input.map, input.statusMap ?? []);
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

    case 'webhook.create': {
      const workspace = await resolveWorkspace(db, input.workspace);
      const events = [...new Set(input.events)];
      const unknown = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
      if (unknown.length > 0) {
        throw new AppError('invalid_request', `Unknown event type ${unknown.join(', ')}; the types are ${WEBHOOK_EVENT_TYPES.join(', ')}.`, {
          errors: [{ field: 'events', message: `unknown event type ${unknown.join(', ')}` }],
        });
      }
      if (!deps.secrets) throw new Error('webhook.create needs the installation\'s secrets key');
      await checkEndpointUrl(input.url, deps.allowPrivateHosts ?? false);
      const endpointDeps = { secrets: deps.secrets, clock, allowPrivateHosts: deps.allowPrivateHosts ?? false };
      return db.transaction().execute(async (trx) => {
        // The command line is an admin's: the endpoint may receive every event type, as one made in the UI.
        const endpoint = await createEndpoint(
          trx, workspace.id, { url: input.url, events, description: input.description ?? null }, endpointDeps, SCOPES,
        );
        await writeAudit(trx, {
          workspaceId: workspace.id, source: 'cli', action: 'webhook.created', target: { type: 'webhook', id: endpoint.id }, outcome: 'success', occurredAt: clock.now(),
        });
        return { id: endpoint.id, secret: endpoint.secret };
      });
    }

    case 'migrate':
      return { applied: await deps.migrate() };
  }
}
