// The paths of the web UI's pages, in one list that both sides read: the client's router (web/src/App.tsx) renders
// a page for each, and the server (web-app.ts) answers each with index.html, so that a reload or a pasted link
// opens the page instead of a JSON 404. A page added to one side and forgotten on the other cannot happen: the
// router's table is typed by this list.

/** The pages a signed-in person sees in the app, in the order the router tries them (a fixed segment first). */
export const APP_PAGES = [
  '/leads',
  // Before /leads/:id, which would take it for a lead id.
  '/leads/import',
  '/leads/:id',
  '/runs',
  // Before /runs/:id, which would take them for run ids.
  '/runs/review',
  '/runs/batches/:id',
  '/runs/:id',
  '/runs/:id/trace',
  '/outbox',
  '/outcomes',
  '/settings/keys',
  '/settings/members',
  '/settings/audit',
  '/settings/usage',
  '/settings/email',
  '/settings/webhooks',
  '/settings/sequences',
  '/settings/suppressions',
  '/settings/profile',
] as const;

export type AppPage = (typeof APP_PAGES)[number];

/** The pages outside the app's frame: the root, first-run setup, sign-in and the password reset link. */
export const ENTRY_PAGES = ['/', '/setup', '/signin', '/reset-password'] as const;

export type EntryPage = (typeof ENTRY_PAGES)[number];

/**
 * Paths that belong to the API, its reference (/docs/) or to the build's files, where a miss is an error for a
 * program, not a page for a person: they keep the JSON problem; any other unknown GET gets the app, which shows its
 * not-found page.
 */
export const NOT_APP_PREFIXES = ['/api/', '/ui/api/', '/assets/', '/docs/'] as const;
