// The tests' HTTP client, on `node:http` with a keep-alive agent: it sends what it is given as it is, and costs less
// CPU than fetch, which the test processes would call tens of thousands of times.
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

// No cap on connections, as fetch has none: a test that starts fifty requests at once has fifty in flight.
const agent = new http.Agent({ keepAlive: true });

/**
 * One HTTP request with the path, headers and body exactly as given (fetch would normalise the path and refuse
 * some header values). A text/event-stream answer is not read to its end: its headers are enough.
 */
export async function rawRequest(base: string, method: string, path: string, options: { headers?: Record<string, string>; body?: string | Buffer; /** Of silence; 15 s by default, 0 for none. */ timeoutMs?: number } = {}): Promise<RawResponse> {
  try {
    return await rawRequestOnce(base, method, path, options);
  } catch (error) {
    // A kept-alive connection the server had just closed (after refusing a body it did not read): the request
    // never reached it, so it is sent again on a new connection, as Node's documentation advises.
    if ((error as { reusedSocket?: boolean }).reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
      return rawRequestOnce(base, method, path, options);
    }
    throw error;
  }
}

function rawRequestOnce(base: string, method: string, path: string, options: { headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number }): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    // Node frames a GET or DELETE body with neither Content-Length nor chunks: the bytes would read as the next request.
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = http.request({
      host: url.hostname, port: url.port, method, path, agent, headers,
      timeout: options.timeoutMs ?? 15_000,
    }, (res) => {
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', json: undefined });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${options.timeoutMs ?? 15_000} ms`)));
    req.on('error', (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

/** The Headers-based ApiResponse of test/helpers.ts, from a raw response. */
export function asApiResponse(res: RawResponse) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of [value].flat()) headers.append(name, v);
  }
  return { status: res.status, headers, json: res.json, text: res.text };
}
