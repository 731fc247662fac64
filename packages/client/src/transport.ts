// One request to the API, with the client's key, bounded retries and errors as LeadrunError. A request is retried
// only when repeating it cannot do a thing twice: a GET, PUT or DELETE, or a POST/PATCH that carries an
// Idempotency-Key (the server answers its repetition with the first answer). It is retried on 429 and 503, after
// the Retry-After the server gave, on an Idempotency-Key still in flight, and when the connection failed.
import { LeadrunError, type Problem } from './errors.ts';

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: FetchLike;
  /** How many times a request may be repeated (default 3): the first try plus at most this many. */
  retries?: number;
  /** The longest wait between two tries, whatever Retry-After says, in ms (default 60 000). */
  maxRetryDelayMs?: number;
}

export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>;

export interface RequestOptions {
  query?: Record<string, QueryValue> | undefined;
  /** A JSON body (serialised here), or a text body sent with `contentType`. */
  json?: unknown;
  text?: string;
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
  /** Makes a POST or PATCH safe to repeat: sent as Idempotency-Key, the same on every try. */
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Try once only, whatever the answer (the events stream: its caller falls back to polling instead of waiting). */
  once?: boolean;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const RETRY_STATUSES = new Set([429, 503]);

export class Transport {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: FetchLike;
  readonly #retries: number;
  readonly #maxRetryDelayMs: number;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError('createClient: baseUrl is required, e.g. "https://leadrun.example.com"');
    if (!options.apiKey) throw new TypeError('createClient: apiKey is required (an API key, sk_…)');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    // Bound to globalThis: some runtimes refuse a fetch called as a method of another object.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#retries = Math.max(0, Math.floor(options.retries ?? 3));
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
  }

  /** The absolute URL of a path of the API (or of a Link the API gave), with its query. */
  url(path: string, query?: Record<string, QueryValue>): URL {
    // A Link the API gave is a path from its root, like every path here: both go after the base URL as given.
    const url = /^https?:\/\//i.test(path) ? new URL(path) : new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(one));
    }
    return url;
  }

  /** Sends the request, retrying as the header comment says; answers the successful Response, or throws LeadrunError. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers = new Headers(options.headers);
    headers.set('authorization', `Bearer ${this.#apiKey}`);
    headers.set('accept', options.accept ?? 'application/json');
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers.set('content-type', 'application/json');
    } else if (options.text !== undefined) {
      body = options.text;
      headers.set('content-type', options.contentType ?? 'text/plain; charset=utf-8');
    }
    if (options.idempotencyKey) headers.set('idempotency-key', options.idempotencyKey);
    const repeatable = !options.once && (IDEMPOTENT_METHODS.has(method) || Boolean(options.idempotencyKey));
    const url = this.url(path, options.query);

    let lostAnswer = false;
    for (let attempt = 0; ; attempt++) {
      const mayRetry = repeatable && attempt < this.#retries;
      let response: Response;
      try {
        response = await this.#fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), ...(options.signal ? { signal: options.signal } : {}) });
      } catch (error) {
        // A failed connection (TypeError from fetch) is retried; an abort is the caller's decision and is not.
        if (!mayRetry || options.signal?.aborted || isAbort(error)) throw error;
        lostAnswer = true;
        await delay(this.#backoff(attempt), options.signal);
        continue;
      }
      if (response.ok) return response;
      // A DELETE whose first answer was lost may well have been done: its repetition finding nothing is success.
      if (method === 'DELETE' && lostAnswer && response.status === 404) {
        await response.body?.cancel();
        return new Response(null, { status: 204, headers: response.headers });
      }
      const error = await errorOf(response);
      const retryable = RETRY_STATUSES.has(response.status) || (response.status === 409 && error.code === 'idempotency_conflict' && Boolean(options.idempotencyKey));
      if (!mayRetry || !retryable) throw error;
      const wait = retryAfterMs(response.headers.get('retry-after')) ?? this.#backoff(attempt);
      await delay(Math.min(wait, this.#maxRetryDelayMs), options.signal);
    }
  }

  /** Sends the request and reads its JSON answer; undefined for 204. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Exponential backoff with jitter when the server said nothing: about 0.5 s, 1 s, 2 s… */
  #backoff(attempt: number): number {
    return Math.min(this.#maxRetryDelayMs, 500 * 2 ** attempt * (0.5 + Math.random() / 2));
  }
}

/** The LeadrunError of a failed answer (its body is read). */
export async function errorOf(response: Response): Promise<LeadrunError> {
  const text = await response.text().catch(() => '');
  let problem: Problem | null = null;
  if (/json/i.test(response.headers.get('content-type') ?? '')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && typeof (parsed as Problem).code === 'string') problem = parsed as Problem;
    } catch {
      // Not JSON after all: reported by its status and text.
    }
  }
  return new LeadrunError(response.status, problem, response.headers, problem ? '' : text);
}

/** Retry-After as ms: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its day and month; Date.parse alone would take '-3' or '1.5' for years.
  const date = /^[a-z]{3}, /i.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** The `rel="next"` target of a Link header, if any. */
export function nextLinkOf(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(?:^|;)\s*rel\s*=\s*"?(?:[^";]*\s)?next(?:\s[^";]*)?"?\s*(?:;|$)/i.test(match[2]!)) return match[1]!;
  }
  return null;
}
