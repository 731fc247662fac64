// What the pages use of the router (TanStack Router, web/src/routes.tsx): its typed Link, which is a real <a href> (it
// opens in a new tab, shows its address and works with the keyboard as links do) and checks its path, params and
// search against the routes, and its typed navigation.
import { Link as RouterLink, useLocation, useNavigate, type LinkComponent } from '@tanstack/react-router';
import { useCallback } from 'react';

/**
 * The router's Link, marked as the current page (aria-current) only when it leads exactly to the page shown: a "back
 * to the leads" link on a lead's page is not the current page. Links that know better (the navigation) say so.
 */
export const Link: LinkComponent<'a'> = (props) => <RouterLink activeOptions={{ exact: true }} activeProps={{}} {...props} />;

/** The path shown, for what highlights or closes as it changes. */
export function usePathname(): string {
  return useLocation({ select: (location) => location.pathname });
}

/**
 * Changes some parameters of the page's query string (null, undefined or '' removes one), replacing the history entry:
 * filters are not pages. A page reads them typed, as its route's `validateSearch` made them (web/src/routes.tsx).
 */
export function useSearchUpdate(): (next: Record<string, string | null | undefined>) => void {
  const navigate = useNavigate();
  return useCallback((next: Record<string, string | null | undefined>) => {
    void navigate({
      to: '.',
      search: (old: Record<string, unknown>) => {
        const merged: Record<string, unknown> = { ...old, ...next };
        for (const [name, value] of Object.entries(merged)) if (value === undefined || value === null || value === '') delete merged[name];
        return merged;
      },
      replace: true,
      resetScroll: false,
    });
  }, [navigate]);
}
