// The leads list as an address: the search, the filters and the page are in the URL
// (`/leads?q=…&status=…&owner=…&page=3&cursor=…`), so a reload, Back and Forward, and a shared link show the same
// leads. It imports nothing and touches no browser global (the statuses and the storage are handed in), so that
// Node's tests load it as it is.

export const LEADS_PAGE_SIZE = 25;
/** The API's bound on `q` (longer is a 400). */
export const SEARCH_MAX_LENGTH = 200;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whose leads are listed: `me` (the person signed in, so that a shared "my leads" link means the reader's), `none`
 * (assigned to nobody), a member's id, or null for everyone's.
 */
export type Owner = 'me' | 'none' | (string & {});

/** `S`: the lead statuses (`LeadStatus` in the UI). */
export interface LeadView<S extends string = string> {
  q: string;
  status: S | null;
  owner: Owner | null;
  /** 1 for the first page; the page `cursor` opens otherwise. */
  page: number;
  /** The API's cursor of this page, null on the first. */
  cursor: string | null;
}

/** The filters of GET /api/v1/leads (and its count and export) that a view asks for. */
export interface LeadFilters<S extends string = string> {
  q: string | null;
  status: S | null;
  assignedToUserId: string | null;
}

/** The view a query string asks for; anything it cannot mean is left out, so a mangled link still opens. */
export function readLeadView<S extends string>(search: string, statuses: readonly S[]): LeadView<S> {
  const params = new URLSearchParams(search);
  const q = (params.get('q') ?? '').trim().slice(0, SEARCH_MAX_LENGTH);
  const rawStatus = params.get('status');
  const status = statuses.find((s) => s === rawStatus) ?? null;
  const rawOwner = params.get('owner');
  const owner = rawOwner === 'me' || rawOwner === 'none' || (rawOwner && UUID.test(rawOwner)) ? rawOwner.toLowerCase() : null;
  const cursor = params.get('cursor') || null;
  // Digits only: "1e3" is no page number a person wrote.
  const page = /^[1-9]\d{0,8}$/.test(params.get('page') ?? '') ? Number(params.get('page')) : 0;
  return { q, status, owner, cursor, page: cursor ? Math.max(page, 2) : 1 };
}

/** The query of a view: only what differs from the plain list, page and cursor only past the first page. */
export type LeadSearch<S extends string = string> = { q?: string; status?: S; owner?: Owner; page?: string; cursor?: string };

export function leadSearch<S extends string>(view: LeadView<S>): LeadSearch<S> {
  const search: LeadSearch<S> = {};
  if (view.q) search.q = view.q;
  if (view.status) search.status = view.status;
  if (view.owner) search.owner = view.owner;
  if (view.cursor) {
    search.page = String(view.page);
    search.cursor = view.cursor;
  }
  return search;
}

/** The same view on its first page with some filters changed: a new filter starts again at page 1. */
export function withFilters<S extends string>(view: LeadView<S>, change: Partial<Pick<LeadView<S>, 'q' | 'status' | 'owner'>>): LeadView<S> {
  return { ...view, ...change, page: 1, cursor: null };
}

export function leadFilters<S extends string>(view: LeadView<S>, myUserId: string): LeadFilters<S> {
  return { q: view.q || null, status: view.status, assignedToUserId: view.owner === 'me' ? myUserId : view.owner };
}

export function hasFilters(view: LeadView<string>): boolean {
  return Boolean(view.q || view.status || view.owner);
}

/** GET /api/v1/leads/export with the same filters: the CSV of every lead the list finds, over all its pages. */
export function exportPath(filters: LeadFilters<string>): string {
  const params = new URLSearchParams();
  if (filters.q) params.set('q', filters.q);
  if (filters.status) params.set('status', filters.status);
  if (filters.assignedToUserId) params.set('assignedToUserId', filters.assignedToUserId);
  const text = params.toString();
  return text ? `/api/v1/leads/export?${text}` : '/api/v1/leads/export';
}

// The API pages forward only (a cursor names where the next page starts). The cursor of the page before each page
// seen is kept in the tab's sessionStorage, per filters, so that "Newer" works after a reload and after Back and
// Forward; a page opened from a shared link, with nothing remembered, offers the first page instead.
const MEMORY = 'leadrun.leads.previous:';

/** What is used of the Web Storage API (window.sessionStorage in the UI). */
export interface PageMemory {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

function memoryKey(filters: LeadFilters<string>, cursor: string): string {
  return `${MEMORY}${JSON.stringify([filters.q, filters.status, filters.assignedToUserId, cursor])}`;
}

/** Notes that the page `cursor` opens comes after the page `previous` opens (null: the first page). */
export function rememberPreviousPage(memory: PageMemory, filters: LeadFilters<string>, cursor: string, previous: string | null): void {
  try {
    memory.setItem(memoryKey(filters, cursor), previous ?? '');
  } catch {
    // Storage refused (full, or disabled): "Newer" falls back to the first page.
  }
}

/** The cursor of the page before `cursor`'s: null for the first page, undefined when it is not known. */
export function previousPage(memory: PageMemory, filters: LeadFilters<string>, cursor: string): string | null | undefined {
  try {
    const value = memory.getItem(memoryKey(filters, cursor));
    return value === null ? undefined : value || null;
  } catch {
    return undefined;
  }
}
