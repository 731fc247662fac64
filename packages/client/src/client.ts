// createClient: the leadrun API as typed methods. Every request and answer type is taken from schema.d.ts, which is
// generated from the API document, so a change of the API shows here as a type error rather than at run time.
import type { components, paths } from './schema.js';
import { LeadrunError, LeadrunTimeoutError } from './errors.ts';
import { readEventStream } from './sse.ts';
import { delay, nextLinkOf, Transport, type FetchLike, type QueryValue } from './transport.ts';
import { verifyWebhook, type VerifyOptions, type WebhookEvent, type WebhookHeaders } from './webhooks.ts';

type Schemas = components['schemas'];
export type Lead = Schemas['Lead'];
export type Call = Schemas['Call'];
export type Run = Schemas['Run'];
export type RunStatus = Run['status'];
export type DraftVersion = Schemas['DraftVersion'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

type Method = 'get' | 'post' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<C> = C extends { content: { 'application/json': infer J } } ? J : never;
/** The JSON body an operation takes. */
export type RequestBody<P extends keyof paths, M extends Method> = Operation<P, M> extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;
/** The JSON of an operation's successful answer (204 aside). */
export type ResponseBody<P extends keyof paths, M extends Method> = Operation<P, M> extends { responses: infer R }
  ? JsonOf<R[Extract<keyof R, 200 | 201 | 202>]>
  : never;
/** An operation's query parameters, every one optional (the server has a default for each it needs). */
export type QueryOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { query?: infer Q } } ? Partial<NonNullable<Q>> : never;

/** One event of a run, as GET /api/v1/runs/{id}/events lists it (and streams it). */
export type RunEvent = Schemas['RunEvent'];
export type LeadCreate = RequestBody<'/api/v1/leads', 'post'>;
export type LeadUpdate = RequestBody<'/api/v1/leads/{id}', 'patch'>;
export type LeadListParams = QueryOf<'/api/v1/leads', 'get'>;
export type LeadFilters = QueryOf<'/api/v1/leads/count', 'get'>;
/**
 * A JSON import: leads as `leads.create` takes them. The API document leaves a row's shape open (a row that is not a
 * lead is reported in the answer's `errors`, not refused), so the client types it here.
 */
export type LeadImportFile = { leads: LeadCreate[] };
export type LeadImportOptions = QueryOf<'/api/v1/leads/import', 'post'>;
export type LeadImportResult = ResponseBody<'/api/v1/leads/import', 'post'>;
export type CallCreate = RequestBody<'/api/v1/leads/{leadId}/calls', 'post'>;
export type CallListParams = QueryOf<'/api/v1/leads/{leadId}/calls', 'get'>;
export type RunCreate = RequestBody<'/api/v1/runs', 'post'>;
export type RunBatchItem = RequestBody<'/api/v1/runs/batch', 'post'>['runs'][number];
export type RunListParams = QueryOf<'/api/v1/runs', 'get'>;
export type RunApprove = RequestBody<'/api/v1/runs/{id}/approve', 'post'>;
export type RunReject = RequestBody<'/api/v1/runs/{id}/reject', 'post'>;
export type DraftEdit = RequestBody<'/api/v1/runs/{id}/draft', 'patch'>;
export type WebhookEndpointCreate = RequestBody<'/api/v1/webhooks', 'post'>;
export type WebhookEndpointUpdate = RequestBody<'/api/v1/webhooks/{id}', 'patch'>;
export type WebhookEndpointWithSecret = ResponseBody<'/api/v1/webhooks', 'post'>;
export type WebhookDeliveryListParams = QueryOf<'/api/v1/webhooks/{id}/deliveries', 'get'>;

export interface ClientOptions {
  /** Where leadrun answers, e.g. `https://leadrun.example.com` (its PUBLIC_URL). */
  baseUrl: string;
  /** An API key, `sk_…`, from Settings / API keys. */
  apiKey: string;
  /** A fetch of your own (a proxy agent, a test double); default the global fetch. */
  fetch?: FetchLike;
  /** How many times a request that is safe to repeat is retried after a 429, a 503 or a failed connection (default 3). */
  retries?: number;
  /** The longest wait between two tries, in ms, whatever Retry-After says (default 60 000). */
  maxRetryDelayMs?: number;
}

export interface RequestControl {
  signal?: AbortSignal;
}

export interface IdempotentControl extends RequestControl {
  /** The Idempotency-Key to send; default a new UUID for this call, reused on its own retries. */
  idempotencyKey?: string;
}

/** One page of a list: its items, and the cursor of the next page (null on the last). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface RunEventsOptions extends RequestControl {
  /** Only the events after this event number (an `id` seen before): resume where you left off. */
  after?: number;
  /**
   * How many times in a row the stream is opened again, with Last-Event-ID, when it breaks before the run's `end`
   * without a new event in between (default 5). Every new event starts the count again.
   */
  reconnects?: number;
}

export interface WaitOptions extends RequestControl {
  /** Resolve once this holds for the run; default once the run is at rest (AWAITING_APPROVAL, COMPLETED, REJECTED, FAILED, CANCELLED). */
  until?: (run: Run) => boolean;
  /** Give up after this many ms with a LeadrunTimeoutError; default never. */
  timeoutMs?: number;
  /** How often to ask for the run when the events stream cannot be held, in ms (default 1 000). */
  pollIntervalMs?: number;
}

/** The statuses a run stays in until someone acts: `runs.wait` resolves at the first of them by default. */
export const RUN_AT_REST: ReadonlySet<RunStatus> = new Set<RunStatus>(['AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED']);

const enc = encodeURIComponent;

export function createClient(options: ClientOptions) {
  const http = new Transport(options);
  const newKey = () => crypto.randomUUID();
  const query = (params: object | undefined) => params as Record<string, QueryValue> | undefined;

  /** Every item of every page of a list, following `Link: <…>; rel="next"`. */
  async function* paginate<T>(path: string, params: object | undefined, signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
    let next: string | null = path;
    let first = true;
    while (next !== null) {
      const response = await http.send('GET', next, { query: first ? query(params) : undefined, signal });
      first = false;
      const page = (await response.json()) as { data: T[] };
      yield* page.data;
      next = nextLinkOf(response.headers.get('link'));
    }
  }

  /**
   * One page of a list, with the cursor of the next: the `cursor` of the `Link: <…>; rel="next"` the server sent, to
   * be given back as it is. For a caller that keeps its place itself (a table with a "more" button, a job that stops
   * and resumes), where `list()` keeps it in an iterator.
   */
  async function page<T>(path: string, params: object | undefined, signal?: AbortSignal): Promise<Page<T>> {
    const response = await http.send('GET', path, { query: query(params), signal });
    const { data } = (await response.json()) as { data: T[] };
    const next = nextLinkOf(response.headers.get('link'));
    return { data, nextCursor: next === null ? null : new URL(next, http.baseUrl).searchParams.get('cursor') };
  }

  /** A POST made safe to retry by its Idempotency-Key. */
  function post<T>(path: string, body: unknown, control: IdempotentControl = {}): Promise<T> {
    return http.json<T>('POST', path, { json: body ?? {}, idempotencyKey: control.idempotencyKey ?? newKey(), signal: control.signal });
  }

  const leads = {
    /** Every lead the filters find, newest first, over every page. */
    list(params: LeadListParams = {}, control: RequestControl = {}): AsyncIterable<Lead> {
      return paginate<Lead>('/api/v1/leads', params, control.signal);
    },
    /** One page of the leads the filters find, newest first, and the `nextCursor` of the next (null: the last). */
    page(params: LeadListParams = {}, control: RequestControl = {}): Promise<Page<Lead>> {
      return page<Lead>('/api/v1/leads', params, control.signal);
    },
    async get(id: string, control: RequestControl = {}): Promise<Lead> {
      return (await http.json<ResponseBody<'/api/v1/leads/{id}', 'get'>>('GET', `/api/v1/leads/${enc(id)}`, control)).data;
    },
    create(body: LeadCreate, control: IdempotentControl = {}): Promise<Lead> {
      return post<ResponseBody<'/api/v1/leads', 'post'>>('/api/v1/leads', body, control);
    },
    /** Changes the fields sent; answers the lead, or null for a key without `leads:read`. */
    async update(id: string, body: LeadUpdate, control: RequestControl = {}): Promise<Lead | null> {
      const answer = await http.json<ResponseBody<'/api/v1/leads/{id}', 'patch'> | undefined>('PATCH', `/api/v1/leads/${enc(id)}`, { json: body, signal: control.signal });
      return answer?.data ?? null;
    },
    /** Erases the lead with its calls, runs and drafts. */
    async delete(id: string, control: RequestControl = {}): Promise<void> {
      await http.send('DELETE', `/api/v1/leads/${enc(id)}`, control);
    },
    async count(filters: LeadFilters = {}, control: RequestControl = {}): Promise<number> {
      return (await http.json<ResponseBody<'/api/v1/leads/count', 'get'>>('GET', '/api/v1/leads/count', { query: query(filters), signal: control.signal })).count;
    },
    /** Imports a CSV file (a string) or JSON leads (`{ leads: [...] }` or an array of leads). */
    import(file: string | LeadImportFile | LeadImportFile['leads'], importOptions: LeadImportOptions = {}, control: IdempotentControl = {}): Promise<LeadImportResult> {
      const idempotencyKey = control.idempotencyKey ?? newKey();
      const common = { query: query(importOptions), idempotencyKey, signal: control.signal };
      if (typeof file === 'string') return http.json('POST', '/api/v1/leads/import', { ...common, text: file, contentType: 'text/csv; charset=utf-8' });
      return http.json('POST', '/api/v1/leads/import', { ...common, json: Array.isArray(file) ? { leads: file } : file });
    },
    /** The CSV export of every lead the filters find, as text. */
    async export(filters: LeadFilters = {}, control: RequestControl = {}): Promise<string> {
      const response = await http.send('GET', '/api/v1/leads/export', { query: query(filters), accept: 'text/csv', signal: control.signal });
      return response.text();
    },
    /** The CSV export as a stream of bytes, for exports too large to hold. */
    async exportStream(filters: LeadFilters = {}, control: RequestControl = {}): Promise<ReadableStream<Uint8Array>> {
      const response = await http.send('GET', '/api/v1/leads/export', { query: query(filters), accept: 'text/csv', signal: control.signal });
      if (!response.body) throw new TypeError('the export answered no body');
      return response.body;
    },
  };

  const calls = {
    /** Every call of a lead, over every page. */
    list(leadId: string, params: CallListParams = {}, control: RequestControl = {}): AsyncIterable<Call> {
      return paginate<Call>(`/api/v1/leads/${enc(leadId)}/calls`, params, control.signal);
    },
    create(leadId: string, body: CallCreate, control: IdempotentControl = {}): Promise<Call> {
      return post<ResponseBody<'/api/v1/leads/{leadId}/calls', 'post'>>(`/api/v1/leads/${enc(leadId)}/calls`, body, control);
    },
    async delete(leadId: string, id: string, control: RequestControl = {}): Promise<void> {
      await http.send('DELETE', `/api/v1/leads/${enc(leadId)}/calls/${enc(id)}`, control);
    },
  };

  /** A decision answers the run to a key with `runs:read`, and nothing (null) to one without. */
  async function decide(id: string, action: string, body: unknown, control: IdempotentControl): Promise<Run | null> {
    const answer = await post<{ data: Run } | undefined>(`/api/v1/runs/${enc(id)}/${action}`, body, control);
    return answer?.data ?? null;
  }

  const runs = {
    /** Starts a run (202, QUEUED). Sent with an Idempotency-Key, so a retry after a lost answer starts no second run. */
    create(body: RunCreate, control: IdempotentControl = {}): Promise<Run> {
      return post<ResponseBody<'/api/v1/runs', 'post'>>('/api/v1/runs', body, control);
    },
    /** Starts up to 100 runs at once, all or nothing; answers them in the order given. */
    async batch(items: RunBatchItem[], control: IdempotentControl = {}): Promise<Run[]> {
      return (await post<ResponseBody<'/api/v1/runs/batch', 'post'>>('/api/v1/runs/batch', { runs: items }, control)).data;
    },
    async get(id: string, control: RequestControl = {}): Promise<Run> {
      return (await http.json<ResponseBody<'/api/v1/runs/{id}', 'get'>>('GET', `/api/v1/runs/${enc(id)}`, control)).data;
    },
    list(params: RunListParams = {}, control: RequestControl = {}): AsyncIterable<Run> {
      return paginate<Run>('/api/v1/runs', params, control.signal);
    },
    /** One page of runs and the `nextCursor` to ask for the next (null: the last). */
    page(params: RunListParams = {}, control: RequestControl = {}): Promise<Page<Run>> {
      return page<Run>('/api/v1/runs', params, control.signal);
    },
    approve(id: string, body: RunApprove = {}, control: IdempotentControl = {}): Promise<Run | null> {
      return decide(id, 'approve', body, control);
    },
    reject(id: string, body: RunReject = {}, control: IdempotentControl = {}): Promise<Run | null> {
      return decide(id, 'reject', body, control);
    },
    cancel(id: string, control: IdempotentControl = {}): Promise<Run | null> {
      return decide(id, 'cancel', {}, control);
    },
    /** Queues a FAILED delivery of the approved draft again. */
    retryDelivery(id: string, control: IdempotentControl = {}): Promise<Run | null> {
      return decide(id, 'deliver', {}, control);
    },
    /** Edits the draft of a run AWAITING_APPROVAL. */
    async editDraft(id: string, body: DraftEdit, control: RequestControl = {}): Promise<Run | null> {
      const answer = await http.json<ResponseBody<'/api/v1/runs/{id}/draft', 'patch'> | undefined>('PATCH', `/api/v1/runs/${enc(id)}/draft`, { json: body, signal: control.signal });
      return answer?.data ?? null;
    },
    /** Every version of the run's draft. */
    async drafts(id: string, control: RequestControl = {}): Promise<DraftVersion[]> {
      return (await http.json<ResponseBody<'/api/v1/runs/{id}/drafts', 'get'>>('GET', `/api/v1/runs/${enc(id)}/drafts`, control)).data;
    },
    /** The run's events so far, oldest first (`after`: only those after that event number), waiting for none. */
    async listEvents(id: string, params: { after?: number } = {}, control: RequestControl = {}): Promise<RunEvent[]> {
      const path = `/api/v1/runs/${enc(id)}/events`;
      return (await http.json<{ data: RunEvent[] }>('GET', path, { query: params, signal: control.signal })).data;
    },
    /**
     * The run's events as they happen: every event so far, then each new one, until the run is at rest, when the
     * iteration ends (`for await (const event of client.runs.events(id))`). A stream that breaks is opened again
     * with Last-Event-ID, so no event is missed or seen twice. Leaving the loop closes the stream.
     */
    events(id: string, eventsOptions: RunEventsOptions = {}): AsyncIterable<RunEvent> {
      return followEvents(id, eventsOptions);
    },
    /**
     * Resolves with the run once it is at rest (or `until` holds), following its events stream and, when the stream
     * cannot be held (refused by a proxy, too many open), asking for the run every `pollIntervalMs`.
     */
    wait(id: string, waitOptions: WaitOptions = {}): Promise<Run> {
      return waitForRun(id, waitOptions);
    },
  };

  async function* followEvents(id: string, eventsOptions: RunEventsOptions): AsyncGenerator<RunEvent, void, undefined> {
    const { signal } = eventsOptions;
    const reconnects = Math.max(0, eventsOptions.reconnects ?? 5);
    let lastEventId = eventsOptions.after === undefined ? null : String(eventsOptions.after);
    for (let failures = 0; ; failures++) {
      let broken: unknown = null;
      // Opened as any GET is: a 429, a 503 or a failed connection is retried by the transport; a refusal (401 for a
      // revoked key, 404) ends the iteration with its LeadrunError.
      const response = await http.send('GET', `/api/v1/runs/${enc(id)}/events`, {
        accept: 'text/event-stream',
        signal,
        ...(lastEventId === null ? {} : { headers: { 'last-event-id': lastEventId } }),
      });
      if (!response.body || !/^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
        await response.body?.cancel().catch(() => {});
        throw new TypeError(`GET /api/v1/runs/${id}/events answered no event stream: a proxy may refuse or buffer it`);
      }
      try {
        for await (const event of readEventStream(response.body)) {
          if (event.event === 'end') return;
          if (event.id !== null) lastEventId = event.id;
          failures = 0;
          yield JSON.parse(event.data) as RunEvent;
        }
      } catch (error) {
        if (signal?.aborted) throw error;
        // The connection broke mid-stream: opened again below, after the last event seen.
        broken = error;
      }
      // Ended without `end`, or broken: the run is not at rest yet, so the stream is opened again after a pause.
      if (failures >= reconnects) {
        throw broken ?? new TypeError(`the events stream of run ${id} kept ending before the run came to rest`);
      }
      await delay(Math.min(500 * 2 ** failures, 5_000), signal);
    }
  }

  async function waitForRun(id: string, waitOptions: WaitOptions): Promise<Run> {
    const controller = new AbortController();
    const { signal } = controller;
    const onAbort = () => controller.abort(waitOptions.signal?.reason);
    if (waitOptions.signal?.aborted) onAbort();
    waitOptions.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = waitOptions.timeoutMs === undefined ? undefined : setTimeout(() => {
      controller.abort(new LeadrunTimeoutError(`run ${id} did not come to rest within ${waitOptions.timeoutMs} ms`));
    }, waitOptions.timeoutMs);
    const until = waitOptions.until ?? ((run: Run) => RUN_AT_REST.has(run.status));
    try {
      let run = await runs.get(id, { signal });
      if (until(run)) return run;
      const streamed = await followStream(id, until, !waitOptions.until, signal);
      if (streamed) return streamed;
      for (;;) {
        await delay(waitOptions.pollIntervalMs ?? 1_000, signal);
        run = await runs.get(id, { signal });
        if (until(run)) return run;
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      waitOptions.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Follows the run's events stream, resuming with Last-Event-ID when it breaks, until `until` holds. Null when the
   * stream cannot be held or has ended with the run at rest but `until` not holding: the caller polls then.
   * With the default `until` (`onlyAtEnd`), the run is read only at the stream's `end`; otherwise after each event.
   */
  async function followStream(id: string, until: (run: Run) => boolean, onlyAtEnd: boolean, signal: AbortSignal): Promise<Run | null> {
    let lastEventId: string | null = null;
    for (let failures = 0; failures < 3; failures++) {
      let response: Response;
      try {
        response = await http.send('GET', `/api/v1/runs/${enc(id)}/events`, {
          accept: 'text/event-stream', once: true, signal, ...(lastEventId ? { headers: { 'last-event-id': lastEventId } } : {}),
        });
      } catch (error) {
        if (signal.aborted) throw error;
        if (error instanceof LeadrunError && [401, 403, 404].includes(error.status)) throw error;
        return null;
      }
      if (!response.body || !/^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
        await response.body?.cancel().catch(() => {});
        return null;
      }
      try {
        for await (const event of readEventStream(response.body)) {
          if (event.id) lastEventId = event.id;
          failures = 0;
          if (event.event === 'end') {
            const run = await runs.get(id, { signal });
            return until(run) ? run : null;
          }
          if (!onlyAtEnd) {
            const run = await runs.get(id, { signal });
            if (until(run)) return run;
          }
        }
      } catch (error) {
        if (signal.aborted) throw error;
        if (error instanceof LeadrunError) throw error;
        // The connection broke mid-stream: resumed after the last event seen.
      }
    }
    return null;
  }

  const webhooks = {
    async list(control: RequestControl = {}): Promise<WebhookEndpoint[]> {
      return (await http.json<ResponseBody<'/api/v1/webhooks', 'get'>>('GET', '/api/v1/webhooks', control)).data;
    },
    async get(id: string, control: RequestControl = {}): Promise<WebhookEndpoint> {
      return (await http.json<ResponseBody<'/api/v1/webhooks/{id}', 'get'>>('GET', `/api/v1/webhooks/${enc(id)}`, control)).data;
    },
    /** Adds an endpoint; the answer carries its signing `secret`, shown this once. */
    create(body: WebhookEndpointCreate, control: IdempotentControl = {}): Promise<WebhookEndpointWithSecret> {
      return post<WebhookEndpointWithSecret>('/api/v1/webhooks', body, control);
    },
    async update(id: string, body: WebhookEndpointUpdate, control: RequestControl = {}): Promise<WebhookEndpoint> {
      return (await http.json<ResponseBody<'/api/v1/webhooks/{id}', 'patch'>>('PATCH', `/api/v1/webhooks/${enc(id)}`, { json: body, signal: control.signal })).data;
    },
    async delete(id: string, control: RequestControl = {}): Promise<void> {
      await http.send('DELETE', `/api/v1/webhooks/${enc(id)}`, control);
    },
    /** The endpoint's delivery log, newest first, over every page. */
    deliveries(id: string, params: WebhookDeliveryListParams = {}, control: RequestControl = {}): AsyncIterable<WebhookDelivery> {
      return paginate<WebhookDelivery>(`/api/v1/webhooks/${enc(id)}/deliveries`, params, control.signal);
    },
    /** Sends a delivery's event again, as a new delivery with the same `webhook-id`. */
    async retryDelivery(id: string, deliveryId: string, control: IdempotentControl = {}): Promise<WebhookDelivery> {
      return (await post<ResponseBody<'/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry', 'post'>>(`/api/v1/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/retry`, {}, control)).data;
    },
    /** Sends a `webhook.test` event to this endpoint alone. */
    async test(id: string, control: IdempotentControl = {}): Promise<WebhookDelivery> {
      return (await post<ResponseBody<'/api/v1/webhooks/{id}/test', 'post'>>(`/api/v1/webhooks/${enc(id)}/test`, {}, control)).data;
    },
    /** Rolls the signing secret: answers the new one; the previous one signs too for 24 hours. */
    rotateSecret(id: string, control: IdempotentControl = {}): Promise<WebhookEndpointWithSecret> {
      return post<ResponseBody<'/api/v1/webhooks/{id}/rotate-secret', 'post'>>(`/api/v1/webhooks/${enc(id)}/rotate-secret`, {}, control);
    },
    /** Checks a received webhook (raw body, its headers, the endpoint's `whsec_…` secret) and answers its event. */
    verify(body: string | Uint8Array, headers: WebhookHeaders, secret: string, verifyOptions?: VerifyOptions): Promise<WebhookEvent> {
      return verifyWebhook(body, headers, secret, verifyOptions);
    },
  };

  return { leads, calls, runs, webhooks };
}

export type LeadrunClient = ReturnType<typeof createClient>;
