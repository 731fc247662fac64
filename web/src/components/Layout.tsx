// The app shell: a sidebar with the workspace, the navigation and the person signed in; on a phone, a top bar
// whose menu button opens the same navigation in a drawer.
import { useEffect, useState, type ReactNode } from 'react';
import { displayName } from '../lib/format';
import type { LinkProps } from '@tanstack/react-router';
import { Link, usePathname } from '../lib/router';
import { useSession, useSignedIn } from '../lib/session';
import { Dialog } from './Dialog';
import { Icon, type IconName } from './Icon';
import { Avatar, Badge } from './ui';

interface NavItem { to: NonNullable<LinkProps['to']>; label: string; icon: IconName; adminOnly?: boolean }

const WORK: NavItem[] = [
  { to: '/leads', label: 'Leads', icon: 'leads' },
  { to: '/runs', label: 'Runs', icon: 'runs' },
  { to: '/runs/review', label: 'Review drafts', icon: 'inbox' },
  { to: '/outbox', label: 'Outbox', icon: 'clock' },
  { to: '/outcomes', label: 'Outcomes', icon: 'usage' },
];
const SETTINGS: NavItem[] = [
  { to: '/settings/keys', label: 'API keys', icon: 'key', adminOnly: true },
  { to: '/settings/members', label: 'Members', icon: 'members' },
  { to: '/settings/audit', label: 'Audit log', icon: 'audit', adminOnly: true },
  { to: '/settings/usage', label: 'Plan and usage', icon: 'usage' },
  { to: '/settings/email', label: 'E-mail', icon: 'mail', adminOnly: true },
  { to: '/settings/webhooks', label: 'Webhooks', icon: 'external', adminOnly: true },
  { to: '/settings/sequences', label: 'Sequences', icon: 'refresh', adminOnly: true },
  { to: '/settings/suppressions', label: 'Suppressions', icon: 'lock' },
  { to: '/settings/profile', label: 'Your profile', icon: 'profile' },
];

function isActive(pathname: string, to: string): boolean {
  if (to === '/runs') return pathname === '/runs' || (pathname.startsWith('/runs/') && !pathname.startsWith('/runs/review'));
  return pathname === to || pathname.startsWith(`${to}/`);
}

function Brand() {
  return (
    <Link to="/leads" className="brand" aria-label="leadrun home">
      <svg width="26" height="26" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
        <rect width="32" height="32" rx="8" fill="var(--accent)" />
        <path d="M9 22.5V9.5h3.2v10.2H19v2.8z" fill="#fff" />
        <circle cx="22.5" cy="11" r="2.6" fill="var(--brand-dot)" />
      </svg>
      <span>leadrun</span>
    </Link>
  );
}

function Navigation({ onNavigate }: { onNavigate?: () => void }) {
  const pathname = usePathname();
  const session = useSignedIn();
  const { signOut } = useSession();
  const isAdmin = session.user.role === 'ADMIN';
  const item = (entry: NavItem) => (
    <li key={entry.to}>
      <Link to={entry.to} className="nav-link" aria-current={isActive(pathname, entry.to) ? 'page' : undefined} onClick={onNavigate}>
        <Icon name={entry.icon} size={17} />
        <span>{entry.label}</span>
        {entry.adminOnly && !isAdmin && <><Icon name="lock" size={13} className="nav-lock" /><span className="visually-hidden"> (admins only)</span></>}
      </Link>
    </li>
  );
  return (
    <>
      <div className="workspace-card">
        <span className="workspace-name" title={session.workspace.name}>{session.workspace.name}</span>
        <Badge tone={session.workspace.plan === 'PRO' ? 'violet' : 'neutral'}>{session.workspace.plan === 'PRO' ? 'Pro' : 'Free'}</Badge>
      </div>
      <nav className="nav" aria-label="Main">
        <ul>{WORK.map(item)}</ul>
        <p className="nav-heading" id="nav-settings">Settings</p>
        <ul aria-labelledby="nav-settings">{SETTINGS.map(item)}</ul>
        <ul className="nav-secondary">
          <li>
            <a className="nav-link" href="/docs" target="_blank" rel="noopener">
              <Icon name="doc" size={17} /><span>API reference</span><Icon name="external" size={13} className="nav-lock" />
            </a>
          </li>
        </ul>
      </nav>
      <div className="user-card">
        <Avatar name={displayName(session.user)} />
        <div className="user-text">
          <Link to="/settings/profile" className="user-name" onClick={onNavigate} title="Your profile">{displayName(session.user)}</Link>
          <span className="user-meta">{session.user.email}</span>
        </div>
        <button type="button" className="icon-button" onClick={() => void signOut()} aria-label="Sign out" title="Sign out">
          <Icon name="signOut" size={17} />
        </button>
      </div>
    </>
  );
}

export function AppShell({ children }: { children: ReactNode }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const pathname = usePathname();
  useEffect(() => setMenuOpen(false), [pathname]);
  return (
    <div className="shell">
      <a className="skip-link" href="#main">Skip to content</a>
      <aside className="sidebar">
        <Brand />
        <Navigation />
      </aside>
      <header className="topbar">
        <Brand />
        <button type="button" className="icon-button" aria-label="Open menu" aria-haspopup="dialog" onClick={() => setMenuOpen(true)}>
          <Icon name="menu" size={20} />
        </button>
      </header>
      {menuOpen && (
        <Dialog title="Menu" onClose={() => setMenuOpen(false)} className="drawer" size="small">
          <Navigation onNavigate={() => setMenuOpen(false)} />
        </Dialog>
      )}
      <main id="main" className="main" tabIndex={-1}>
        <div className="content">{children}</div>
      </main>
    </div>
  );
}

/** The layout of the pages a signed-out person sees: first run and sign-in. */
export function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <div className="auth">
      <main id="main" className="auth-main">
        <div className="auth-brand"><Brand /></div>
        {children}
        <p className="auth-foot">Self-hosted · your data stays on your server</p>
      </main>
    </div>
  );
}
