// The people of the workspace, for choosing to whom a lead is assigned and for showing who owns it.
import { api } from '../api/client';
import type { Member } from '../api/types';
import { displayName } from './format';
import { useMemo } from 'react';
import { useApiQuery, type AsyncState } from './query';

/** The workspace's present members, by name (the signed-in person among them). */
export function useMembers(): AsyncState<Member[]> {
  const members = useApiQuery(['members'], loadMembers);
  const sorted = useMemo(() => members.data && [...members.data].sort(byName), [members.data]);
  return { ...members, data: sorted };
}

/** GET /ui/api/members, cached as ['members'] by every page that shows them. */
export function loadMembers(signal: AbortSignal): Promise<Member[]> {
  return api.get('/ui/api/members', { signal }).then((r) => r.body.data);
}

function byName(a: Member, b: Member): number {
  return displayName(a).localeCompare(displayName(b));
}

/** Who a lead is assigned to, as a person reads it. */
export function ownerName(userId: string | null, members: readonly Member[] | undefined, myUserId: string): string {
  if (!userId) return 'Nobody';
  if (userId === myUserId) return 'You';
  if (!members) return '…';
  const member = members.find((m) => m.id === userId);
  // Not among the members: removed a moment ago (a removal unassigns their leads).
  return member ? displayName(member) : 'A former member';
}
