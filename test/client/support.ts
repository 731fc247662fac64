// What the client's tests share: a leadrun on loopback with a key, and a loopback proxy in front of it that can
// answer for the server (a 429, a refusal of event streams) or lose an answer, to test the client's retries and
// fallbacks against the real server behind it.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/clock.ts';
import { webhookHandler } from '../../src/jobs/handlers/webhook-deliver.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { silentLogger, type TestApp } from '../helpers.ts';
import { PROJECT_ROOT } from '../cli/support.ts';

export const PACKAGE_DIR = path.join(PROJECT_ROOT, 'packages/client');

/** What the proxy does with one request: pass it on, answer it itself, or pass it on and drop the answer. */
export type ProxyDecision = 'pass' | 'drop-answer' | 'cut-after-first-event' | { status: number; headers?: Record<string, string>; body?: string };

export interface Proxy {
  url: string;
  /** Decides each request; by default every one passes. */
  decide: (request: http.IncomingMessage, index: number) => ProxyDecision;
  /** Every request seen: method, URL and headers. */
  seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }>;
  /** Resolves when a request matching `match` arrives (from now on). */
  arrival(match: (request: http.IncomingMessage) => boolean): Promise<void>;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const upstream = new URL(target);
  const waiters: Array<{ match: (request: http.IncomingMessage) => boolean; resolve: () => void }> = [];
  const proxy: Proxy = {
    url: '',
    decide: () => 'pass',
    seen: [],
    arrival(match) {
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const index = proxy.seen.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }) - 1;
    for (const waiter of waiters.filter((w) => w.match(req))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const decision = proxy.decide(req, index);
    if (typeof decision === 'object') {
      req.resume();
      res.writeHead(decision.status, decision.headers ?? {});
      res.end(decision.body ?? '');
      return;
    }
    const forward = http.request({
      host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host },
    }, (answer) => {
      if (decision === 'drop-answer') {
        // The server has done the work and answered; the client never hears of it.
        answer.resume();
        answer.on('end', () => res.socket?.destroy());
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (decision === 'cut-after-first-event') {
        // The connection breaks once the first event (an `id:` block) has been passed on, as a flaky network would.
        let text = '';
        answer.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          const block = /^id: .*\n(?:.*\n)*?\n/m.exec(text);
          if (!block) return;
          res.write(text.slice(0, block.index + block[0].length));
          answer.destroy();
          // Ended, not destroyed: what was written reaches the client, then the connection closes mid-response.
          res.socket?.end();
        });
        return;
      }
      answer.pipe(res);
    });
    forward.on('error', () => res.socket?.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

/** A job runner that delivers webhooks at once (loopback receivers are allowed by the app's config). */
export async function startWebhookRunner(t: TestApp): Promise<JobRunner> {
  const runner = new JobRunner({
    database: t.database, clock: systemClock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger,
    handlers: [webhookHandler({ leaseMs: 10_000, retryDelaysMs: [50, 50, 50], timeoutMs: 2_000 })], pollMs: 30, drainMs: 500,
  });
  await runner.start();
  return runner;
}

const EXAMPLE_MARKER = '<!-- example:';

/** The fenced ts block that follows the README's example marker. */
export async function readmeExample(): Promise<string> {
  const readme = await readFile(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
  const marker = readme.indexOf(EXAMPLE_MARKER);
  assert.ok(marker >= 0, 'the README marks its example');
  const block = /```ts\n([\s\S]*?)\n```/.exec(readme.slice(marker));
  assert.ok(block?.[1] && block.index < 200, 'a ```ts block follows the marker at once');
  return block[1];
}
