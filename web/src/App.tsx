// Which page a path shows, and who may see it: a first run sees only setup, a signed-out person only sign-in
// (then comes back to where they were going), a signed-in person the app; a password reset link, anyone.
import type { ReactNode } from 'react';
import { APP_PAGES, type AppPage } from '../../src/http/ui/app-pages.ts';
import { AppShell, AuthLayout } from './components/Layout';
import { Button, EmptyState, ErrorAlert, LoadingBlock } from './components/ui';
import { matchPath, Redirect, useRouter } from './lib/router';
import { useSession } from './lib/session';
import { LeadImportPage } from './pages/LeadImportPage';
import { LeadPage } from './pages/LeadPage';
import { LeadsPage } from './pages/LeadsPage';
import { BatchPage } from './pages/BatchPage';
import { ReviewPage } from './pages/ReviewPage';
import { RunPage } from './pages/RunPage';
import { ResetPasswordPage } from './pages/ResetPasswordPage';
import { RunsPage } from './pages/RunsPage';
import { SetupPage } from './pages/SetupPage';
import { SignInPage } from './pages/SignInPage';
import { TracePage } from './pages/TracePage';
import { AuditPage } from './pages/settings/AuditPage';
import { EmailSettingsPage } from './pages/settings/EmailSettingsPage';
import { KeysPage } from './pages/settings/KeysPage';
import { MembersPage } from './pages/settings/MembersPage';
import { ProfilePage } from './pages/settings/ProfilePage';
import { UsagePage } from './pages/settings/UsagePage';
import { WebhooksPage } from './pages/settings/WebhooksPage';

// One page for each path of the shared list; the record's type makes a path without a page fail to compile.
const PAGES: Record<AppPage, (params: Record<string, string>) => ReactNode> = {
  '/leads': () => <LeadsPage />,
  '/leads/import': () => <LeadImportPage />,
  '/leads/:id': ({ id }) => <LeadPage key={id} id={id!} />,
  '/runs': () => <RunsPage />,
  '/runs/review': () => <ReviewPage />,
  '/runs/batches/:id': ({ id }) => <BatchPage key={id} id={id!} />,
  '/runs/:id': ({ id }) => <RunPage key={id} id={id!} />,
  '/runs/:id/trace': ({ id }) => <TracePage key={id} id={id!} />,
  '/settings/keys': () => <KeysPage />,
  '/settings/members': () => <MembersPage />,
  '/settings/audit': () => <AuditPage />,
  '/settings/usage': () => <UsagePage />,
  '/settings/email': () => <EmailSettingsPage />,
  '/settings/webhooks': () => <WebhooksPage />,
  '/settings/profile': () => <ProfilePage />,
};

function NotFound() {
  return (
    <EmptyState
      icon="search"
      title="This page does not exist"
      action={<Button variant="primary" onClick={() => window.location.assign('/leads')}>Go to leads</Button>}>
      The address may be mistyped, or the page was moved.
    </EmptyState>
  );
}

/** Where to go after signing in: the page asked for, if it is one of ours. */
function returnPath(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/signin') && !next.startsWith('/setup') ? next : '/leads';
}

export function App() {
  const { state, retry } = useSession();
  const { pathname, search } = useRouter();

  if (state.status === 'loading') {
    return <div className="boot"><LoadingBlock label="Opening leadrun" /></div>;
  }
  if (state.status === 'error') {
    return <AuthLayout><div className="auth-card"><ErrorAlert error={state.error} retry={retry} /></div></AuthLayout>;
  }
  // A password reset link works whoever is signed in here, or nobody.
  if (pathname === '/reset-password') return <AuthLayout><ResetPasswordPage /></AuthLayout>;
  if (state.status === 'setup') {
    return pathname === '/setup' ? <AuthLayout><SetupPage /></AuthLayout> : <Redirect to="/setup" />;
  }
  if (state.status === 'signed-out') {
    if (pathname === '/signin') return <AuthLayout><SignInPage expired={state.expired} next={returnPath(search)} /></AuthLayout>;
    const here = `${pathname}${search}`;
    return <Redirect to={pathname === '/' || pathname === '/setup' ? '/signin' : `/signin?next=${encodeURIComponent(here)}`} />;
  }
  if (pathname === '/' || pathname === '/signin' || pathname === '/setup') return <Redirect to={returnPath(search)} />;

  // In the list's order, so that a fixed segment (/runs/review) wins over a parameter (/runs/:id).
  for (const pattern of APP_PAGES) {
    const params = matchPath(pattern, pathname);
    if (params) return <AppShell>{PAGES[pattern](params)}</AppShell>;
  }
  return <AppShell><NotFound /></AppShell>;
}
