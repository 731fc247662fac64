// What a member sees on a page for admins: a clear message and who to ask, never the data.
import { api } from '../../api/client';
import { EmptyState } from '../../components/ui';
import { displayName } from '../../lib/format';
import { useAsync } from '../../lib/useAsync';

export function AdminOnly({ what }: { what: string }) {
  const members = useAsync((signal) => api.get('/ui/api/members', { signal }).then((r) => r.body.data), []);
  const admins = members.data?.filter((m) => m.role === 'ADMIN') ?? [];
  return (
    <EmptyState icon="lock" title="Admins only">
      Only workspace admins can see and manage {what}.
      {admins.length > 0 && <> Ask {admins.length === 1 ? 'your admin' : 'one of your admins'}: {admins.map((a) => displayName(a)).join(', ')}.</>}
    </EmptyState>
  );
}
