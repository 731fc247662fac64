// A small router over the History API: the few routes of the UI need no library. Links are real <a href>
// elements, so they open in a new tab, show their address and work with the keyboard as links do.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

interface Location {
  pathname: string;
  search: string;
}

interface RouterValue extends Location {
  navigate(to: string, options?: { replace?: boolean }): void;
}

const RouterContext = createContext<RouterValue | null>(null);

function current(): Location {
  return { pathname: window.location.pathname, search: window.location.search };
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const onPop = () => setLocation(current());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = useCallback((to: string, options: { replace?: boolean } = {}) => {
    const url = new URL(to, window.location.href);
    const target = `${url.pathname}${url.search}`;
    if (target === `${window.location.pathname}${window.location.search}`) return;
    if (options.replace) window.history.replaceState(null, '', target);
    else window.history.pushState(null, '', target);
    setLocation(current());
    if (!options.replace) window.scrollTo(0, 0);
  }, []);
  const value = useMemo(() => ({ ...location, navigate }), [location, navigate]);
  return <RouterContext.Provider value={value}>{children}</RouterContext.Provider>;
}

export function useRouter(): RouterValue {
  const value = useContext(RouterContext);
  if (!value) throw new Error('useRouter outside RouterProvider');
  return value;
}

/** The query string as an object, and a setter that replaces the history entry (filters are not pages). */
export function useSearchParams(): [URLSearchParams, (next: Record<string, string | null>) => void] {
  const { search, pathname, navigate } = useRouter();
  const params = useMemo(() => new URLSearchParams(search), [search]);
  const update = useCallback((next: Record<string, string | null>) => {
    const merged = new URLSearchParams(search);
    for (const [name, value] of Object.entries(next)) {
      if (value === null || value === '') merged.delete(name);
      else merged.set(name, value);
    }
    const text = merged.toString();
    navigate(`${pathname}${text ? `?${text}` : ''}`, { replace: true });
  }, [search, pathname, navigate]);
  return [params, update];
}

/** Matches `/leads/:id` against a path; the named segments, or null. */
export function matchPath(pattern: string, pathname: string): Record<string, string> | null {
  const names: string[] = [];
  const source = pattern.replace(/\/:(\w+)/g, (_, name: string) => {
    names.push(name);
    return '/([^/]+)';
  });
  const match = new RegExp(`^${source}/?$`).exec(pathname);
  if (!match) return null;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? '')]));
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string; children: ReactNode };

export function Link({ to, onClick, children, ...rest }: LinkProps) {
  const { navigate } = useRouter();
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if (rest.target && rest.target !== '_self') return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={handle} {...rest}>{children}</a>;
}

/** Navigates on first render; for routes that only send you elsewhere. */
export function Redirect({ to }: { to: string }) {
  const { navigate } = useRouter();
  useEffect(() => navigate(to, { replace: true }), [navigate, to]);
  return null;
}
