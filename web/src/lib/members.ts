// The people of the workspace, for choosing to whom a lead is assigned and for showing who owns it.
import { api } from '../api/client';
import type { Member } from '../api/types';
import { displayName } from './format';
import { useAsync, type AsyncState } from './useAsync';

/** The workspace's present members, by name (the signed-in person among them). */
export function useMembers(): AsyncState<Member[]> {
  return useAsync((signal) => api.get('/ui/api/members', { signal }).then((r) => [...r.body.data].sort(byName)), []);
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
