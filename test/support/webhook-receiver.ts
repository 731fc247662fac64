// A webhook receiver on loopback: records every request (headers and body as sent) and answers as the test says,
// by default 204. `next` resolves when a request matching a predicate arrives.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
}

export type Answer = (request: ReceivedWebhook, index: number) => { status: number; body?: string | Buffer } | 'hang' | 'huge';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  answer: Answer;
  /** Resolves once some request satisfies `match` (one already received counts). */
  next(match: (request: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hooks'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters: Array<{ match: (r: ReceivedWebhook) => boolean; resolve: (r: ReceivedWebhook) => void }> = [];
  const receiver: WebhookReceiver = {
    url: '',
    received,
    answer: () => ({ status: 204 }),
    next(match, timeoutMs = 20_000) {
      const found = received.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching webhook within ${timeoutMs} ms; got ${received.map((r) => r.json?.type).join(', ')}`)), timeoutMs);
        waiters.push({ match, resolve: (r) => { clearTimeout(timer); resolve(r); } });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: any;
      try { json = JSON.parse(body); } catch { json = undefined; }
      const request = { headers: req.headers, body, json };
      const index = received.push(request) - 1;
      const answer = receiver.answer(request, index);
      if (answer === 'hang') return; // never answers; closed with the server
      if (answer === 'huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const block = Buffer.alloc(1024 * 1024, 'x');
        let sent = 0;
        const write = () => {
          while (sent < 10 && res.write(block)) sent++;
          if (sent < 10) res.once('drain', () => { sent++; write(); });
          else res.end();
        };
        res.on('error', () => {});
        write();
      } else {
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        res.end(answer.body ?? '');
      }
      for (const waiter of [...waiters]) {
        if (waiter.match(request)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(request);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
