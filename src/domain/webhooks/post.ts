// One attempt to deliver a webhook: a POST to the checked address (the host name still in Host and in TLS), no
// redirect followed, the whole attempt bounded by a deadline, and no more of the answer read than the excerpt kept.
import https from 'node:https';
import { isIP } from 'node:net';
import { http } from '../../net/node-http.ts';
import { resolveEndpointHost, WebhookUrlRefused } from './url.ts';

/** The most of an answer's body that is read and kept for the delivery log. */
export const EXCERPT_BYTES = 1024;
/** What of a failed attempt's error is kept (and answered). */
export const ERROR_MAX = 1000;

export interface PostResult {
  /** The answer's status, or null when none came (refused, unreachable, timed out). */
  status: number | null;
  excerpt: string | null;
  error: string | null;
  /** No answer came within the deadline: the endpoint held a delivery slot for the whole of it. */
  timedOut: boolean;
  durationMs: number;
}

export interface PostOptions {
  allowPrivateHosts: boolean;
  timeoutMs: number;
  userAgent: string;
  signal?: AbortSignal;
}

/** Never throws: every outcome is a result to log. */
export async function postWebhook(url: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  try {
    const target = new URL(url);
    const address = await withSignal(resolveEndpointHost(target, options.allowPrivateHosts), signal);
    const answer = await request(target, address, { ...headers, 'user-agent': options.userAgent }, body, signal);
    const error = answer.status >= 200 && answer.status < 300 ? null : describeStatus(answer.status);
    return { ...answer, error, timedOut: false, durationMs: elapsed() };
  } catch (error) {
    const message = deadline.aborted
      ? `No answer within ${options.timeoutMs / 1000} s.`
      : error instanceof WebhookUrlRefused ? `The URL ${error.message}.` : (error instanceof Error ? error.message : String(error));
    const kept = message.slice(0, ERROR_MAX);
    return { status: null, excerpt: null, error: kept, timedOut: deadline.aborted, durationMs: elapsed() };
  }
}

function describeStatus(status: number): string {
  if (status >= 300 && status < 400) return `The endpoint answered ${status}, a redirect, which is not followed.`;
  return `The endpoint answered ${status}.`;
}

function withSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function request(url: URL, address: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<{ status: number; excerpt: string }> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const family = isIP(address);
    const req = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      // The address already checked, whatever the name would resolve to now.
      lookup: (_host, opts, callback) => {
        if ((opts as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
        else callback(null, address, family);
      },
      signal,
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, excerpt: excerptOf(Buffer.concat(chunks)) });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        // Enough for the log: the rest of an answer, however large, is never read.
        if (size >= EXCERPT_BYTES) done();
      });
      res.on('end', done);
      res.on('error', (error) => (size > 0 ? done() : reject(error)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** At most EXCERPT_BYTES of the answer as text, cut at a character's boundary. */
function excerptOf(bytes: Buffer): string {
  const text = bytes.subarray(0, EXCERPT_BYTES).toString('utf8');
  return text.endsWith('\uFFFD') && bytes.length > EXCERPT_BYTES ? text.slice(0, -1) : text;
}
