// A local OpenAI-compatible endpoint on loopback for tests: `POST /v1/chat/completions` (plain and streamed) and
// `GET /v1/models`. Each request takes the next scripted reply (or the default one), and every request is recorded
// so a test can assert the prompts, the model and the `response_format` the client sent. Like a real provider it
// can take its time to answer and refuse requests beyond a rate with 429 and Retry-After; it counts the chat
// completions in flight.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** What the server does with one request. */
export type Reply =
  /** A chat completion whose message content is `content` (an object is sent as its JSON text). */
  | { kind: 'chat'; content: unknown; usage?: Usage | null; model?: string; finishReason?: string }
  /** An error answer: a status, an OpenAI-style error body and optional headers (`retry-after`). */
  | { kind: 'status'; status: number; message?: string; body?: unknown; headers?: Record<string, string> }
  /** Never answers; the request ends when the client gives up (or the server closes). */
  | { kind: 'hang' }
  /** Closes the connection without an answer. */
  | { kind: 'drop' };

export type ReplyFn = (request: RecordedRequest) => Reply;

export interface ChatMessage {
  role: string;
  content: string | Array<{ type: string; text?: string }> | null;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body as received. */
  raw: string;
  /** The parsed JSON body, or null when it was not JSON. */
  body: any;
  /** Resolves when the client closes the connection before (or without) an answer. */
  aborted: Promise<void>;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface OpenAIServerOptions {
  defaultModel?: string;
  /** How long a chat completion takes to answer, as a model's latency (error answers come at once). */
  delayMs?: number;
  /**
   * `requests` every `windowMs`, enforced as providers do, continuously: a bucket of `requests` tokens refilled at that
   * rate, one taken by each chat completion. Without a token, a request is refused at once with a 429 whose
   * Retry-After is the whole seconds (rounded up) until the next token.
   */
  rateLimit?: { requests: number; windowMs: number };
}

export interface OpenAIServer {
  /** Base URL to give a client, ending in `/v1`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Queues replies, used one per request in order; when none is queued the default reply is used. */
  reply(...replies: Array<Reply | ReplyFn>): void;
  /** The reply used when nothing is queued (initially a 500 saying so). */
  setDefault(reply: Reply | ReplyFn): void;
  /** Resolves with the request numbered `index` (0-based) once it has arrived. */
  request(index: number): Promise<RecordedRequest>;
  /** Chat completions not yet answered, and the most there ever were at once. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Chat completions refused by `rateLimit`, when they arrived. */
  readonly refusedAt: number[];
  close(): Promise<void>;
}

/** A chat completion answer; `content` may be an object (sent as JSON) or any text (malformed on purpose). */
export function chat(content: unknown, options: { usage?: Usage | null; model?: string; finishReason?: string } = {}): Reply {
  return { kind: 'chat', content, ...options };
}

export function status(code: number, options: { message?: string; body?: unknown; headers?: Record<string, string> } = {}): Reply {
  return { kind: 'status', status: code, ...options };
}

export const rateLimited = (retryAfterSeconds = 1): Reply =>
  status(429, { message: 'Rate limit reached, please retry later.', headers: { 'retry-after': String(retryAfterSeconds) } });
export const hang = (): Reply => ({ kind: 'hang' });
export const drop = (): Reply => ({ kind: 'drop' });

/** The text of a recorded request's messages with the given role, joined. */
export function messageText(request: RecordedRequest, role: 'system' | 'user' | 'assistant'): string {
  const messages: ChatMessage[] = Array.isArray(request.body?.messages) ? request.body.messages : [];
  return messages
    .filter((m) => m.role === role)
    .map((m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join('')))
    .join('\n');
}

export async function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const queue: Array<Reply | ReplyFn> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let tokens = options.rateLimit?.requests ?? 0;
  let filledAt = Date.now();
  const refusedAt: number[] = [];
  let fallback: Reply | ReplyFn = status(500, { message: 'the test server has no reply scripted for this request' });
  const requests: RecordedRequest[] = [];
  const waiters = new Map<number, Array<(r: RecordedRequest) => void>>();
  let counter = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = null;
      }
      let markAborted!: () => void;
      const aborted = new Promise<void>((resolve) => { markAborted = resolve; });
      res.on('close', () => { if (!res.writableFinished) markAborted(); });
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0]!, headers: req.headers, raw, body, aborted, at: Date.now(),
      };
      requests.push(recorded);
      const index = counter++;
      for (const resolve of waiters.get(index) ?? []) resolve(recorded);
      waiters.delete(index);
      answer(recorded, res);
    });
  });

  function answer(request: RecordedRequest, res: ServerResponse): void {
    if (request.method === 'GET' && request.path === '/v1/models') {
      send(res, 200, { object: 'list', data: [{ id: options.defaultModel ?? 'test-model', object: 'model', owned_by: 'test' }] });
      return;
    }
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions') {
      send(res, 404, { error: { message: `no route ${request.method} ${request.path}`, type: 'invalid_request_error' } });
      return;
    }
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.once('close', () => { inFlight -= 1; });
    const refusal = refuseBeyondRate(request.at);
    if (refusal) {
      refusedAt.push(request.at);
      send(res, 429, { error: { message: 'Rate limit reached for requests, please retry later.', type: 'requests', code: 'rate_limit_exceeded' } }, refusal);
      return;
    }
    const next = queue.shift() ?? fallback;
    const reply = typeof next === 'function' ? next(request) : next;
    if (options.delayMs && reply.kind === 'chat') {
      setTimeout(() => { if (!res.destroyed) respond(request, res, reply); }, options.delayMs);
    } else {
      respond(request, res, reply);
    }
  }

  /** The Retry-After header of a request beyond the rate, or null when it is taken. */
  function refuseBeyondRate(at: number): Record<string, string> | null {
    if (!options.rateLimit) return null;
    const { requests: most, windowMs } = options.rateLimit;
    tokens = Math.min(most, tokens + ((at - filledAt) * most) / windowMs);
    filledAt = at;
    if (tokens >= 1) {
      tokens -= 1;
      return null;
    }
    return { 'retry-after': String(Math.max(1, Math.ceil(((1 - tokens) * windowMs) / most / 1000))) };
  }

  function respond(request: RecordedRequest, res: ServerResponse, reply: Reply): void {
    switch (reply.kind) {
      case 'hang':
        return;
      case 'drop':
        res.socket?.destroy();
        return;
      case 'status':
        send(res, reply.status, reply.body ?? { error: { message: reply.message ?? `status ${reply.status}`, type: 'test_error', code: null } }, reply.headers);
        return;
      case 'chat': {
        const content = typeof reply.content === 'string' ? reply.content : JSON.stringify(reply.content);
        const model = reply.model ?? request.body?.model ?? options.defaultModel ?? 'test-model';
        const usage = reply.usage === undefined ? { prompt_tokens: 100, completion_tokens: 50 } : reply.usage;
        const openaiUsage = usage && { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
        const id = `chatcmpl-test-${requests.length}`;
        const created = Math.floor(Date.now() / 1000);
        if (request.body?.stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
          event({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] });
          event({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: {}, finish_reason: reply.finishReason ?? 'stop' }], ...(openaiUsage ? { usage: openaiUsage } : {}) });
          res.end('data: [DONE]\n\n');
          return;
        }
        send(res, 200, {
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: reply.finishReason ?? 'stop' }],
          ...(openaiUsage ? { usage: openaiUsage } : {}),
        });
        return;
      }
    }
  }

  function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => { queue.push(...replies); },
    setDefault: (reply) => { fallback = reply; },
    get inFlight() { return inFlight; },
    get maxInFlight() { return maxInFlight; },
    refusedAt,
    request(index) {
      const arrived = requests[index];
      if (arrived) return Promise.resolve(arrived);
      return new Promise((resolve) => waiters.set(index, [...(waiters.get(index) ?? []), resolve]));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
