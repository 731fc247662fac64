// Which page a path shows, and who may see it. A first run sees only setup, a signed-out person only sign-in (then
// comes back to where they were going), a signed-in person the app, and only an admin the admin pages; a password
// reset link, anyone. Each rule is one route's `beforeLoad` or layout, not repeated page by page; pages are loaded
// when first opened. The paths are the list the server serves the app at (src/http/ui/app-pages.ts), checked below.
import {
  createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent, Navigate, Outlet, redirect, useNavigate, type RouteComponent, type StaticDataRouteOption,
} from '@tanstack/react-router';
import type { AppPage, EntryPage } from '../../src/http/ui/app-pages.ts';
import { isUuid } from '../../src/domain/validation.ts';
import { LEAD_STATUSES, type RunStatus } from './api/types';
import { AppShell, AuthLayout } from './components/Layout';
import { Button, EmptyState, LoadingBlock } from './components/ui';
import { RUN_STATUS_LABEL } from './lib/format';
import { leadSearch, readLeadView } from './lib/leadList';
import { useSession, type SessionState } from './lib/session';
import { AdminGate } from './pages/settings/AdminOnly';
import { SignInPage } from './pages/SignInPage';

/** The session as the routes' guards see it; App hands it in, and re-runs them when it changes. */
export interface RouterContext {
  session: Exclude<SessionState, { status: 'loading' } | { status: 'error' }>;
}

/** Where to go after signing in: the page asked for, if it is one of ours. */
export function returnPath(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/signin') && !next.startsWith('/setup') ? next : '/leads';
}

function NotFound() {
  const navigate = useNavigate();
  return (
    <EmptyState
      icon="search"
      title="This page does not exist"
      action={<Button variant="primary" onClick={() => void navigate({ to: '/leads' })}>Go to leads</Button>}>
      The address may be mistyped, or the page was moved.
    </EmptyState>
  );
}

/** An unknown path: the not-found page inside the app for a signed-in person, else the way in first. */
function UnknownPath() {
  const { session } = rootRoute.useRouteContext();
  if (session.status === 'signed-in') return <AppShell><NotFound /></AppShell>;
  if (session.status === 'setup') return <Navigate to="/setup" replace />;
  return <Navigate to="/signin" search={{ next: `${window.location.pathname}${window.location.search}` }} replace />;
}

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: UnknownPath,
});

/** A plain query string in and out (`?q=acme&page=2`), as the pages have always written their addresses. */
const plainSearch = {
  parse: (search: string) => Object.fromEntries(new URLSearchParams(search)),
  stringify: (search: Record<string, unknown>) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(search)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
    const text = params.toString();
    return text ? `?${text}` : '';
  },
};
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
const RUN_STATUSES = Object.keys(RUN_STATUS_LABEL) as RunStatus[];

// The way in: the root sends each state to its page; setup and sign-in send a signed-in person on.
const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: ({ context: { session } }) => {
    throw redirect({ to: session.status === 'setup' ? '/setup' : session.status === 'signed-out' ? '/signin' : '/leads', replace: true });
  },
});

const authRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: '_auth',
  component: () => <AuthLayout><Outlet /></AuthLayout>,
});

const setupRoute = createRoute({
  getParentRoute: () => authRoute,
  path: '/setup',
  beforeLoad: ({ context: { session } }) => {
    if (session.status !== 'setup') throw redirect({ to: session.status === 'signed-in' ? '/leads' : '/signin', replace: true });
  },
  component: lazyRouteComponent(() => import('./pages/SetupPage'), 'SetupPage'),
});

const signInRoute = createRoute({
  getParentRoute: () => authRoute,
  path: '/signin',
  validateSearch: (search: Record<string, unknown>): { next?: string } => ({ next: text(search.next) }),
  beforeLoad: ({ context: { session }, search }) => {
    if (session.status === 'setup') throw redirect({ to: '/setup', replace: true });
    // The page asked for before signing in: an address of ours, taken as it was (it is not built here).
    if (session.status === 'signed-in') throw redirect({ href: returnPath(search.next), replace: true });
  },
  component: function SignIn() {
    const { session } = signInRoute.useRouteContext();
    const { next } = signInRoute.useSearch();
    return <SignInPage expired={session.status === 'signed-out' && session.expired} next={returnPath(next)} />;
  },
});

// A password reset link works whoever is signed in here, or nobody.
const resetPasswordRoute = createRoute({
  getParentRoute: () => authRoute,
  path: '/reset-password',
  component: lazyRouteComponent(() => import('./pages/ResetPasswordPage'), 'ResetPasswordPage'),
});

// The app: signed in only, inside the shell.
const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: '_app',
  beforeLoad: ({ context: { session }, location }) => {
    if (session.status === 'setup') throw redirect({ to: '/setup', replace: true });
    if (session.status === 'signed-out') throw redirect({ to: '/signin', search: { next: location.href }, replace: true });
  },
  component: function SignedInApp() {
    // The moment a session ends, before the guards send the page to sign-in, the app shows nothing of it.
    return useSession().session ? <AppShell><Outlet /></AppShell> : null;
  },
});

/** A page of the app, loaded when first opened. */
const appPage = <P extends string>(path: P, component: RouteComponent) => createRoute({ getParentRoute: () => appRoute, path, component });
/** A page about one thing: a new one (another id) is a new page, not the old one's state with a new id. */
const pageAbout = <P extends `${string}$id${string}`>(path: P, component: RouteComponent) =>
  createRoute({ getParentRoute: () => appRoute, path, component, remountDeps: ({ params }: { params: { id: string } }) => params.id });

const leadsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/leads',
  // Anything the address cannot mean is left out, so a mangled link still opens the list.
  validateSearch: (search: Record<string, unknown>) => leadSearch(readLeadView(plainSearch.stringify(search), LEAD_STATUSES)),
  component: lazyRouteComponent(() => import('./pages/LeadsPage'), 'LeadsPage'),
});
const leadImportRoute = appPage('/leads/import', lazyRouteComponent(() => import('./pages/LeadImportPage'), 'LeadImportPage'));
const leadRoute = pageAbout('/leads/$id', lazyRouteComponent(() => import('./pages/LeadPage'), 'LeadPage'));
const runsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/runs',
  validateSearch: (search: Record<string, unknown>): { status?: RunStatus } => ({ status: RUN_STATUSES.find((status) => status === search.status) }),
  component: lazyRouteComponent(() => import('./pages/RunsPage'), 'RunsPage'),
});
const reviewRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/runs/review',
  // The drafts of one batch, or every draft awaiting approval.
  validateSearch: (search: Record<string, unknown>): { batch?: string } => ({ batch: typeof search.batch === 'string' && isUuid(search.batch) ? search.batch : undefined }),
  component: lazyRouteComponent(() => import('./pages/ReviewPage'), 'ReviewPage'),
});
const batchRoute = pageAbout('/runs/batches/$id', lazyRouteComponent(() => import('./pages/BatchPage'), 'BatchPage'));
const runRoute = pageAbout('/runs/$id', lazyRouteComponent(() => import('./pages/RunPage'), 'RunPage'));
const traceRoute = pageAbout('/runs/$id/trace', lazyRouteComponent(() => import('./pages/TracePage'), 'TracePage'));
const outboxRoute = appPage('/outbox', lazyRouteComponent(() => import('./pages/OutboxPage'), 'OutboxPage'));
const outcomesRoute = appPage('/outcomes', lazyRouteComponent(() => import('./pages/OutcomesPage'), 'OutcomesPage'));
const membersRoute = appPage('/settings/members', lazyRouteComponent(() => import('./pages/settings/MembersPage'), 'MembersPage'));
const usageRoute = appPage('/settings/usage', lazyRouteComponent(() => import('./pages/settings/UsagePage'), 'UsagePage'));
const suppressionsRoute = appPage('/settings/suppressions', lazyRouteComponent(() => import('./pages/settings/SuppressionsPage'), 'SuppressionsPage'));
const profileRoute = appPage('/settings/profile', lazyRouteComponent(() => import('./pages/settings/ProfilePage'), 'ProfilePage'));

// Admins only: a member sees the page's header and who to ask, never the data (AdminGate).
const adminRoute = createRoute({
  getParentRoute: () => appRoute,
  id: '_admin',
  component: AdminGate,
});
type AdminPage = NonNullable<StaticDataRouteOption['admin']>;
const adminPage = <P extends string>(path: P, admin: AdminPage, component: RouteComponent) =>
  createRoute({ getParentRoute: () => adminRoute, path, staticData: { admin }, component });
const keysRoute = adminPage('/settings/keys', { title: 'API keys', what: 'API keys', description: 'Keys let your own tools use the leadrun API. Each key belongs to this workspace and carries only the scopes you give it.' },
  lazyRouteComponent(() => import('./pages/settings/KeysPage'), 'KeysPage'));
const auditRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/settings/audit',
  validateSearch: (search: Record<string, unknown>): { source?: string; actor?: string; action?: string; outcome?: string } => ({
    source: text(search.source), actor: text(search.actor), action: text(search.action), outcome: text(search.outcome),
  }),
  staticData: { admin: { title: 'Audit log', what: 'the audit log', description: 'Who changed what, and when: every write through the API, the web app and the command line.' } },
  component: lazyRouteComponent(() => import('./pages/settings/AuditPage'), 'AuditPage'),
});
const emailRoute = adminPage('/settings/email', { title: 'E-mail', what: 'the e-mail settings', description: 'How approved drafts leave leadrun: sent over your SMTP server, or saved to the sender\'s mailbox over IMAP, where replies are found too.' },
  lazyRouteComponent(() => import('./pages/settings/EmailSettingsPage'), 'EmailSettingsPage'));
const sequencesRoute = adminPage('/settings/sequences', { title: 'Sequences', what: 'sequences', description: 'Follow-ups sent in the same thread after an approved e-mail: how many, how long each waits, and whether a person reviews it.' },
  lazyRouteComponent(() => import('./pages/settings/SequencesPage'), 'SequencesPage'));
const webhooksRoute = adminPage('/settings/webhooks', { title: 'Webhooks', what: 'webhooks', description: 'leadrun POSTs events to your endpoints as they happen, signed as Standard Webhooks, and retries when they fail: over a day, by default.' },
  lazyRouteComponent(() => import('./pages/settings/WebhooksPage'), 'WebhooksPage'));

const entryPages = [setupRoute, signInRoute, resetPasswordRoute] as const;
const adminPages = [keysRoute, auditRoute, emailRoute, webhooksRoute, sequencesRoute] as const;
const appPages = [
  leadsRoute, leadImportRoute, leadRoute, runsRoute, reviewRoute, batchRoute, runRoute, traceRoute, outboxRoute, outcomesRoute, membersRoute, usageRoute, profileRoute,
  suppressionsRoute,
] as const;
const routeTree = rootRoute.addChildren([
  indexRoute,
  authRoute.addChildren(entryPages),
  appRoute.addChildren([...appPages, adminRoute.addChildren(adminPages)]),
]);

export function createAppRouter(session: RouterContext['session']) {
  return createRouter({
    routeTree,
    context: { session },
    parseSearch: plainSearch.parse,
    stringifySearch: plainSearch.stringify,
    notFoundMode: 'root',
    defaultPendingComponent: () => <LoadingBlock label="Loading" />,
  });
}

export type AppRouter = ReturnType<typeof createAppRouter>;

declare module '@tanstack/react-router' {
  interface Register {
    router: AppRouter;
  }
  interface StaticDataRouteOption {
    /** The header and the words of an admin-only page, for the member who opens it. */
    admin?: { title: string; what: string; description: string };
  }
}

// The router's paths are exactly the pages the server answers with the app: a page added on one side only fails here.
type ColonParams<P extends string> = P extends `${infer Head}$${infer Name}/${infer Rest}` ? `${Head}:${Name}/${ColonParams<Rest>}`
  : P extends `${infer Head}$${infer Name}` ? `${Head}:${Name}` : P;
type RoutedPage = ColonParams<[typeof indexRoute, ...typeof entryPages, ...typeof appPages, ...typeof adminPages][number]['fullPath']>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const everyPageRouted: Same<RoutedPage, AppPage | EntryPage> = true;
void everyPageRouted;
