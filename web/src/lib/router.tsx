// What the pages use of the router (TanStack Router, web/src/routes.tsx): links that are real <a href> elements (they
// open in a new tab, show their address and work with the keyboard as links do), and navigation by address.
import { useLocation, useRouter as useTanStackRouter } from '@tanstack/react-router';
import { useCallback, useEffect, useMemo, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

interface RouterValue {
  pathname: string;
  /** The query string, with its leading `?` (or empty). */
  search: string;
  navigate(to: string, options?: { replace?: boolean }): void;
}

export function useRouter(): RouterValue {
  const router = useTanStackRouter();
  const { pathname, searchStr } = useLocation();
  const navigate = useCallback((to: string, options: { replace?: boolean } = {}) => {
    const here = router.state.location;
    const url = new URL(to, window.location.href);
    if (`${url.pathname}${url.search}` === `${here.pathname}${here.searchStr}`) return;
    void router.navigate({ href: `${url.pathname}${url.search}`, replace: options.replace ?? false, resetScroll: !options.replace });
  }, [router]);
  return useMemo(() => ({ pathname, search: searchStr, navigate }), [pathname, searchStr, navigate]);
}

/**
 * Changes some parameters of the query string (null or '' removes one), replacing the history entry: filters are not
 * pages. A page reads them typed, as its route's `validateSearch` made them (web/src/routes.tsx).
 */
export function useSearchUpdate(): (next: Record<string, string | null>) => void {
  const { search, pathname, navigate } = useRouter();
  return useCallback((next: Record<string, string | null>) => {
    const merged = new URLSearchParams(search);
    for (const [name, value] of Object.entries(next)) {
      if (value === null || value === '') merged.delete(name);
      else merged.set(name, value);
    }
    const text = merged.toString();
    navigate(`${pathname}${text ? `?${text}` : ''}`, { replace: true });
  }, [search, pathname, navigate]);
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

/** Navigates on first render; for what only sends you elsewhere. */
export function Redirect({ to }: { to: string }) {
  const { navigate } = useRouter();
  useEffect(() => navigate(to, { replace: true }), [navigate, to]);
  return null;
}
