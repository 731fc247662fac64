// The UI's one way to talk to leadrun: openapi-fetch over schema.d.ts, which `npm run gen:api` writes from the server's
// own OpenAPI document (the /ui/api/* routes are in it too), so a changed route breaks the build here. `api.get(path,
// { params, query })` and so on answer the body or throw an ApiError for an error answer; every non-GET request carries
// the session's CSRF token.
import createClient from 'openapi-fetch';
import type { paths } from './schema';

export type Paths = paths;
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

type OpOf<P extends keyof Paths, M extends HttpMethod> = M extends keyof Paths[P] ? NonNullable<Paths[P][M]> : never;
/** The paths that answer method M. */
export type PathsWith<M extends HttpMethod> = { [P in keyof Paths]: [OpOf<P, M>] extends [never] ? never : P }[keyof Paths];

type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type BodyOf<O> = O extends { requestBody?: infer R } ? JsonContent<NonNullable<R>> : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type PathParamsOf<O> = O extends { parameters: { path: infer P } } ? ([P] extends [undefined] ? never : NonNullable<P>) : never;
// A route that answers 200 or 204 by the caller's scopes (updating a lead, deciding on a run: the object only to
// who may read it) answers 200 to the UI, whose session holds every scope; only a route that has nothing but 204 is
// answered without a body.
type SuccessOf<O> = O extends { responses: infer R }
  ? (200 extends keyof R ? JsonContent<R[200]> : never)
  | (201 extends keyof R ? JsonContent<R[201]> : never)
  | (202 extends keyof R ? JsonContent<R[202]> : never)
  | (204 extends keyof R ? ([Extract<keyof R, 200 | 201 | 202>] extends [never] ? undefined : never) : never)
  : never;

/** The JSON body of a successful answer to `M P`. */
export type ResponseOf<M extends HttpMethod, P extends PathsWith<M>> = SuccessOf<OpOf<P, M>>;
/** The JSON body that `M P` takes. */
export type RequestOf<M extends HttpMethod, P extends PathsWith<M>> = BodyOf<OpOf<P, M>>;

type Options<O> = {
  /** Query parameters; those with a server-side default may be left out. */
  query?: [QueryOf<O>] extends [never] ? never : { [K in keyof QueryOf<O>]?: QueryOf<O>[K] | null };
  body?: BodyOf<O>;
  signal?: AbortSignal;
  /** Do not treat a 401 as the end of the session (signing in, checking for one). */
  quietUnauthorized?: boolean;
} & ([PathParamsOf<O>] extends [never] ? { params?: never } : { params: PathParamsOf<O> });

export interface ApiResult<T> {
  body: T;
  status: number;
  headers: Headers;
  /** The `cursor` of the page linked as rel="next", or null on the last page. */
  next: string | null;
}

export interface FieldError {
  field: string;
  message: string;
}

/** An RFC 9457 problem answered by the server, or a request that never got an answer (code `network`). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldError[];
  readonly requestId: string | null;
  /** Seconds, from Retry-After, when the server gave one. */
  readonly retryAfter: number | null;
  /** The whole problem document, for its extension members (`limit`, `resetsAt`, `runStatus`, …). */
  readonly problem: Record<string, unknown>;

  constructor(status: number, problem: Record<string, unknown>, retryAfter: number | null = null) {
    const detail = typeof problem.detail === 'string' ? problem.detail : 'Something went wrong.';
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.code = typeof problem.code === 'string' ? problem.code : 'internal';
    this.title = typeof problem.title === 'string' ? problem.title : 'Error';
    this.detail = detail;
    this.errors = Array.isArray(problem.errors)
      ? problem.errors.filter((e): e is FieldError => typeof e?.field === 'string' && typeof e?.message === 'string')
      : [];
    this.requestId = typeof problem.requestId === 'string' ? problem.requestId : null;
    this.retryAfter = retryAfter;
    this.problem = problem;
  }

  /** The message for one form field, matching `email`, `/email` or `body/email`. */
  fieldError(field: string): string | undefined {
    return this.errors.find((e) => normaliseField(e.field) === field)?.message;
  }
}

export function normaliseField(field: string): string {
  return field.replace(/^(body)?[/.]?/, '').replace(/^\//, '').split(/[/.[]/)[0] ?? field;
}

let csrfToken: string | null = null;
const unauthorizedListeners = new Set<() => void>();
const changeListeners = new Set<() => void>();

/** Called after each change the server accepted, so that what was read before it is read again (lib/query.ts). */
export function onChange(listener: () => void): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

/** The token every non-GET request must carry; set from the Session when signed in, cleared on sign-out. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when a request answers 401: the session has ended (expired, or signed out in another tab). */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** The `cursor` parameter of the rel="next" link in a Link header. */
export function nextCursor(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/i.exec(part);
    if (match?.[1]) return new URL(match[1], 'http://x').searchParams.get('cursor');
  }
  return null;
}

const NO_CONNECTION = {
  code: 'network',
  title: 'No connection',
  detail: 'leadrun could not be reached. Check your connection and try again.',
};

// openapi-fetch does the requests; the paths and methods it takes are the generated ones.
const client = createClient<Paths>({ credentials: 'same-origin', headers: { accept: 'application/json' } });
client.use({
  onRequest({ request }) {
    if (request.method !== 'GET' && csrfToken) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
});

/** Query parameters as the API reads them: a parameter left out rather than sent empty or null. */
function present(query: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return query && Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined && value !== null && value !== ''));
}

async function request<T>(method: HttpMethod, path: string, options: {
  params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown; signal?: AbortSignal; quietUnauthorized?: boolean;
}): Promise<ApiResult<T>> {
  let answer: { data?: unknown; error?: unknown; response: Response };
  try {
    // The generic request is typed per path at `api` below; here the path is any of them.
    answer = await (client.request as (method: string, path: string, init: object) => Promise<typeof answer>)(method, path, {
      params: { path: options.params, query: present(options.query) },
      // A change always sends a JSON body, `{}` when it has nothing to say.
      body: method === 'get' || method === 'delete' ? undefined : options.body ?? {},
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, NO_CONNECTION);
  }
  const { response } = answer;
  if (!response.ok) throw failure(response.status, response.statusText, response.headers, answer.error, options.quietUnauthorized);
  if (method !== 'get') for (const listener of changeListeners) listener();
  return { body: answer.data as T, status: response.status, headers: response.headers, next: nextCursor(response.headers.get('link')) };
}

/** The ApiError of an error answer; a 401 ends the session unless `quietUnauthorized`. */
function failure(status: number, statusText: string, headers: Headers, parsed: unknown, quietUnauthorized = false): ApiError {
  const retry = Number(headers.get('retry-after'));
  const problem = parsed && typeof parsed === 'object'
    ? parsed as Record<string, unknown>
    : { code: status >= 500 ? 'internal' : 'error', detail: `The server answered ${status} ${statusText}.` };
  if (status === 401 && !quietUnauthorized) for (const listener of unauthorizedListeners) listener();
  return new ApiError(status, problem, Number.isFinite(retry) && retry > 0 ? retry : null);
}

function method<M extends HttpMethod>(m: M) {
  return <P extends PathsWith<M>>(path: P, ...rest: {} extends Options<OpOf<P, M>> ? [options?: Options<OpOf<P, M>>] : [options: Options<OpOf<P, M>>]) =>
    request<ResponseOf<M, P>>(m, path as string, (rest[0] ?? {}) as Parameters<typeof request>[2]);
}

/** `api.get('/api/v1/leads/{id}', { params: { id } })` and so on, for every path of the API. */
export const api = {
  get: method('get'),
  post: method('post'),
  put: method('put'),
  patch: method('patch'),
  delete: method('delete'),
};

/**
 * POSTs a file as the request's body (`Content-Type` as given), calling `onProgress` as it is sent: fetch cannot
 * tell an upload's progress, so this goes by XMLHttpRequest. Query arrays become repeated parameters
 * (`map=a&map=b`). Answers and errors as `api.post`.
 */
export function upload<P extends PathsWith<'post'>>(path: P, file: Blob, options: {
  contentType: string;
  query?: QueryOf<OpOf<P, 'post'>>;
  signal?: AbortSignal;
  onProgress?(sent: number, total: number): void;
}): Promise<ApiResult<ResponseOf<'post', P>>> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries((options.query ?? {}) as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null && item !== '') search.append(name, String(item));
    }
  }
  const text = search.toString();
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', text ? `${path}?${text}` : path);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('content-type', options.contentType);
    if (csrfToken) xhr.setRequestHeader('x-csrf-token', csrfToken);
    xhr.upload.onprogress = (event) => options.onProgress?.(event.loaded, event.lengthComputable ? event.total : file.size);
    xhr.onload = () => {
      const headers = new Headers();
      for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      }
      let parsed: unknown;
      try {
        parsed = (headers.get('content-type') ?? '').includes('json') ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        parsed = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        for (const listener of changeListeners) listener();
        resolve({ body: parsed as ResponseOf<'post', P>, status: xhr.status, headers, next: nextCursor(headers.get('link')) });
      } else {
        reject(failure(xhr.status, xhr.statusText, headers, parsed));
      }
    };
    xhr.onerror = () => reject(new ApiError(0, NO_CONNECTION));
    xhr.onabort = () => reject(new DOMException('The upload was stopped.', 'AbortError'));
    options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** A readable sentence for any error, for places that show one line. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.detail;
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}
