// The admin pages' frame: the page's header, then the page for an admin, or for a member a clear message and who
// to ask, never the data. The header and words come from the route's `staticData.admin` (web/src/routes.tsx).
import { Outlet, useMatches } from '@tanstack/react-router';
import { EmptyState, PageHeader } from '../../components/ui';
import { displayName } from '../../lib/format';
import { loadMembers } from '../../lib/members';
import { useSignedIn } from '../../lib/session';
import { useApiQuery, useTitle } from '../../lib/query';

export function AdminOnly({ what }: { what: string }) {
  const members = useApiQuery(['members'], loadMembers);
  const admins = members.data?.filter((m) => m.role === 'ADMIN') ?? [];
  return (
    <EmptyState icon="lock" title="Admins only">
      Only workspace admins can see and manage {what}.
      {admins.length > 0 && <> Ask {admins.length === 1 ? 'your admin' : 'one of your admins'}: {admins.map((a) => displayName(a)).join(', ')}.</>}
    </EmptyState>
  );
}

export function AdminGate() {
  const session = useSignedIn();
  const admin = useMatches({ select: (matches) => matches.findLast((m) => m.staticData.admin)?.staticData.admin });
  useTitle(admin?.title ?? '');
  if (!admin) return <Outlet />;
  return (
    <>
      <PageHeader eyebrow="Settings" title={admin.title} description={admin.description} />
      {session.user.role === 'ADMIN' ? <Outlet /> : <AdminOnly what={admin.what} />}
    </>
  );
}
