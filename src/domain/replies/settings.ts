// The workspace's settings of what replies do (DESIGN §16): whether an interested reply moves a CONTACTED lead to
// QUALIFIED (on by default).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export interface ReplySettings {
  qualifyOnInterest: boolean;
}

export async function getReplySettings(db: Kysely<DB>, workspaceId: string): Promise<ReplySettings> {
  const row = await db.selectFrom('workspaces').select('qualify_on_interest').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return { qualifyOnInterest: row.qualify_on_interest };
}

export async function updateReplySettings(db: Kysely<DB>, workspaceId: string, change: Partial<ReplySettings>): Promise<ReplySettings> {
  if (change.qualifyOnInterest !== undefined) {
    await db.updateTable('workspaces').set({ qualify_on_interest: change.qualifyOnInterest }).where('id', '=', workspaceId).execute();
  }
  return getReplySettings(db, workspaceId);
}
