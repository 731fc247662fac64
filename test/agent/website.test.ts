import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { fetchPage, USER_AGENT, type FetchPageOptions } from '../../src/agent/website.ts';

const HOME = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Kestrel Logistics</title></head>
<body>
  <nav><a href="/about">About</a> <a href="/pricing">Pricing</a></nav>
  <main><h1>Route planning for regional carriers</h1><p>More than 340 carriers plan with Kestrel.</p></main>
  <footer>© 2024 Kestrel Logistics</footer>
</body>
</html>`;
const ABOUT = '<!doctype html><html><head><title>About Kestrel</title></head><body><main><p>Founded in 2016 in Leeds.</p></main></body></html>';
const TWO_MIB = 2 * 1024 * 1024;

let server: Server;
let port: number;
let origin: string;
/** Every request the local server received, so a test can prove a refused fetch sent nothing. */
let received: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

function serve(): Server {
  return createServer((req, res) => {
    received.push({ url: req.url ?? '', headers: req.headers });
    const html = (body: string | Buffer, type = 'text/html; charset=utf-8'): void => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    };
    const redirect = (status: number, location: string): void => {
      res.writeHead(status, { location });
      res.end();
    };
    switch (req.url) {
      case '/':
        return html(HOME);
      case '/about':
        return html(ABOUT);
      case '/old-about':
        return redirect(301, '/about');
      case '/hop-1':
        return redirect(302, '/hop-2');
      case '/hop-2':
        return redirect(307, `${origin}/hop-3`);
      case '/hop-3':
        return redirect(308, '/about');
      case '/loop':
        return redirect(302, '/loop');
      case '/to-metadata':
        return redirect(302, 'http://169.254.169.254/latest/meta-data/');
      case '/to-loopback':
        return redirect(302, `http://127.0.0.1:${port}/`);
      case '/to-ftp':
        return redirect(302, 'ftp://files.kestrel.example/');
      case '/huge': {
        // Streamed without a Content-Length, so only counting the body can stop it.
        res.writeHead(200, { 'content-type': 'text/html' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        for (let sent = 0; sent < TWO_MIB; sent += chunk.length) res.write(chunk);
        return res.end();
      }
      case '/huge-declared':
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(TWO_MIB) });
        return res.end(Buffer.alloc(TWO_MIB, 'a'));
      case '/gzip-bomb':
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        return res.end(gzipSync(Buffer.alloc(TWO_MIB, ' ')));
      case '/gzip':
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        return res.end(gzipSync(HOME));
      case '/latin1':
        return html(Buffer.from('<html><body><p>Café Münster</p></body></html>', 'latin1'), 'text/html; charset=iso-8859-1');
      case '/xhtml':
        return html('<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Strict</p></body></html>', 'application/xhtml+xml');
      case '/untyped':
        res.writeHead(200);
        return res.end(HOME);
      case '/report.pdf':
        return html('%PDF-1.7', 'application/pdf');
      case '/data.json':
        return html('{"html":false}', 'application/json');
      case '/error':
        res.writeHead(500, { 'content-type': 'text/html' });
        return res.end('<h1>Internal error</h1>');
      case '/hang':
        return; // Never answers.
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<html><body><p>Loading');
        return; // Never finishes the body.
      default:
        res.writeHead(404, { 'content-type': 'text/html' });
        return res.end('<h1>Not found</h1>');
    }
  });
}

before(async () => {
  server = serve();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

beforeEach(() => {
  received = [];
});

const local: FetchPageOptions = { allowPrivateHosts: true };

/** A public address for the check, dialled on loopback: the test's packets never leave the machine. */
const PUBLIC_ADDRESS = '93.184.215.14';
const publicName: FetchPageOptions = {
  allowPrivateHosts: false,
  resolveHost: async (hostname) => {
    if (hostname === 'www.kestrel.example') return [{ address: PUBLIC_ADDRESS, family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  },
  dialAddress: (checked) => {
    assert.equal(checked.address, PUBLIC_ADDRESS, 'only an address that passed the check is dialled');
    return { address: '127.0.0.1', family: 4 };
  },
};

describe('fetchPage with private hosts allowed (tests only)', () => {
  it('fetches and decodes a page, sending an honest User-Agent', async () => {
    const page = await fetchPage(`${origin}/`, local);
    assert.deepEqual(page, { ok: true, url: `${origin}/`, status: 200, html: HOME });
    assert.equal(received[0]?.headers['user-agent'], USER_AGENT);
    assert.equal(USER_AGENT, 'leadrun-research/0.1 (+https://github.com/leadrun)');
  });

  it('follows a redirect and reports the final URL', async () => {
    const page = await fetchPage(`${origin}/old-about`, local);
    assert.equal(page.ok, true);
    assert.equal(page.url, `${origin}/about`);
    assert.equal(page.ok && page.html, ABOUT);
  });

  it('follows three redirects but not a fourth', async () => {
    const chain = await fetchPage(`${origin}/hop-1`, local);
    assert.equal(chain.ok, true);
    assert.equal(chain.url, `${origin}/about`);

    received = [];
    const loop = await fetchPage(`${origin}/loop`, local);
    assert.equal(loop.ok, false);
    assert.equal(loop.status, 302);
    assert.match(!loop.ok ? loop.error : '', /More than 3 redirects/);
    assert.equal(received.length, 4, 'the first request and three redirects');
  });

  it('reads gzip, xhtml, a declared charset, and an HTML body without a content type', async () => {
    const gzip = await fetchPage(`${origin}/gzip`, local);
    assert.equal(gzip.ok && gzip.html, HOME);
    const latin1 = await fetchPage(`${origin}/latin1`, local);
    assert.match(latin1.ok ? latin1.html : '', /Café Münster/);
    const xhtml = await fetchPage(`${origin}/xhtml`, local);
    assert.equal(xhtml.ok, true);
    const untyped = await fetchPage(`${origin}/untyped`, local);
    assert.equal(untyped.ok, true);
  });

  it('stops reading a body beyond 1 MiB, streamed, declared or decompressed', async () => {
    for (const path of ['/huge', '/huge-declared', '/gzip-bomb']) {
      const page = await fetchPage(`${origin}${path}`, local);
      assert.equal(page.ok, false, path);
      assert.equal(page.status, 200);
      assert.match(!page.ok ? page.error : '', /larger than 1 MiB/, path);
    }
  });

  it('honours a smaller maxBytes', async () => {
    const page = await fetchPage(`${origin}/`, { ...local, maxBytes: 100 });
    assert.match(!page.ok ? page.error : '', /larger than 100 bytes/);
  });

  it('does not parse a body that is not HTML', async () => {
    const pdf = await fetchPage(`${origin}/report.pdf`, local);
    assert.deepEqual(pdf, {
      ok: false,
      url: `${origin}/report.pdf`,
      status: 200,
      error: 'The page is application/pdf, not HTML; only HTML pages are read.',
    });
    const json = await fetchPage(`${origin}/data.json`, local);
    assert.match(!json.ok ? json.error : '', /application\/json, not HTML/);
  });

  it('reports an error status', async () => {
    const page = await fetchPage(`${origin}/error`, local);
    assert.deepEqual(page, { ok: false, url: `${origin}/error`, status: 500, error: 'The site answered HTTP 500 Internal Server Error.' });
    const missing = await fetchPage(`${origin}/nowhere`, local);
    assert.equal(missing.status, 404);
  });

  it('gives up on a site that never answers by its deadline', async () => {
    const started = performance.now();
    const page = await fetchPage(`${origin}/hang`, { ...local, timeoutMs: 150 });
    const elapsed = performance.now() - started;
    assert.deepEqual(page, { ok: false, url: `${origin}/hang`, status: null, error: 'The site did not answer within 150 ms.' });
    assert.ok(elapsed >= 140 && elapsed < 1_000, `gave up after ${elapsed} ms`);
  });

  it('counts the body against the same deadline', async () => {
    const page = await fetchPage(`${origin}/slow-body`, { ...local, timeoutMs: 150 });
    assert.equal(page.ok, false);
    assert.equal(page.status, 200);
    assert.match(!page.ok ? page.error : '', /did not answer within 150 ms/);
  });

  it('stops when the caller cancels', async () => {
    const controller = new AbortController();
    const pending = fetchPage(`${origin}/hang`, { ...local, signal: controller.signal });
    await once(server, 'request');
    controller.abort();
    const page = await pending;
    assert.equal(page.ok, false);
    assert.equal(!page.ok && page.error, 'The fetch was cancelled.');
  });

  it('reports a connection refused', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const page = await fetchPage(`http://127.0.0.1:${closedPort}/`, local);
    assert.match(!page.ok ? page.error : '', /refused the connection/);
  });
});

describe('fetchPage guard against server-side request forgery', () => {
  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1:PORT/', /127\.0\.0\.1: it is a loopback address/],
    ['http://localhost:PORT/', /localhost \((127\.0\.0\.1|::1)\): it is a loopback address/],
    ['http://[::1]:PORT/', /::1: it is a loopback address/],
    ['http://[::ffff:127.0.0.1]/', /loopback address/],
    ['http://[::ffff:10.0.0.1]/', /private address/],
    ['http://10.0.0.1/', /10\.0\.0\.1: it is a private address/],
    ['http://172.16.5.4/', /private address/],
    ['http://192.168.1.1/', /192\.168\.1\.1: it is a private address/],
    ['http://100.64.0.1/', /carrier-grade NAT address/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254: it is a cloud metadata address/],
    ['http://[fd00:ec2::254]/latest/meta-data/', /cloud metadata address/],
    ['http://[fe80::1]/', /link-local address/],
    ['http://[fc00::1]/', /unique-local address/],
    ['http://0.0.0.0/', /0\.0\.0\.0: it is an unspecified address/],
    ['http://[::]/', /unspecified address/],
    ['http://224.0.0.1/', /multicast address/],
    ['http://255.255.255.255/', /broadcast address/],
    ['http://240.0.0.1/', /reserved address/],
    ['http://2130706433:PORT/', /127\.0\.0\.1: it is a loopback address/],
    ['http://0x7f.1:PORT/', /127\.0\.0\.1: it is a loopback address/],
    ['ftp://ftp.kestrel.example/brochure.pdf', /Only http and https pages can be fetched, not ftp\./],
    ['file:///etc/passwd', /Only http and https pages can be fetched, not file\./],
    ['gopher://127.0.0.1:PORT/', /not gopher/],
    ['not a url', /is not a valid URL/],
  ];

  for (const [template, error] of refused) {
    it(`refuses ${template}`, async () => {
      const url = template.replace('PORT', String(port));
      const page = await fetchPage(url, { allowPrivateHosts: false });
      assert.equal(page.ok, false);
      assert.equal(page.status, null);
      assert.match(!page.ok ? page.error : '', error);
      assert.deepEqual(received, [], 'nothing reached the local server');
    });
  }

  it('fetches a public host and follows its redirect within the site', async () => {
    const page = await fetchPage(`http://www.kestrel.example:${port}/old-about`, publicName);
    assert.equal(page.ok, true);
    assert.equal(page.url, `http://www.kestrel.example:${port}/about`);
    assert.equal(received[0]?.headers.host, `www.kestrel.example:${port}`);
  });

  it('refuses a public host that redirects to the metadata address', async () => {
    const page = await fetchPage(`http://www.kestrel.example:${port}/to-metadata`, publicName);
    assert.deepEqual(page, {
      ok: false,
      url: 'http://169.254.169.254/latest/meta-data/',
      status: 302,
      error: 'Refused to connect to 169.254.169.254: it is a cloud metadata address.',
    });
    assert.deepEqual(received.map((r) => r.url), ['/to-metadata']);
  });

  it('refuses a public host that redirects to loopback', async () => {
    const page = await fetchPage(`http://www.kestrel.example:${port}/to-loopback`, publicName);
    assert.equal(page.ok, false);
    assert.match(!page.ok ? page.error : '', /127\.0\.0\.1: it is a loopback address/);
    assert.deepEqual(received.map((r) => r.url), ['/to-loopback']);
  });

  it('refuses a redirect to another scheme', async () => {
    const page = await fetchPage(`http://www.kestrel.example:${port}/to-ftp`, publicName);
    assert.match(!page.ok ? page.error : '', /not ftp/);
  });

  it('refuses a name when any of its addresses is not public', async () => {
    for (const [addresses, reason] of [
      [[PUBLIC_ADDRESS, '10.1.2.3'], /www\.kestrel\.example \(10\.1\.2\.3\): it is a private address/],
      [['::ffff:169.254.169.254'], /cloud metadata address/],
      [['2606:4700::1111', 'fd12:3456::1'], /unique-local address/],
    ] as const) {
      const page = await fetchPage(`http://www.kestrel.example:${port}/`, {
        ...publicName,
        resolveHost: async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      });
      assert.match(!page.ok ? page.error : '', reason);
    }
    assert.deepEqual(received, []);
  });

  it('reports a name that does not resolve', async () => {
    const page = await fetchPage('http://nowhere.kestrel.example/', publicName);
    assert.deepEqual(page, { ok: false, url: 'http://nowhere.kestrel.example/', status: null, error: 'Could not resolve nowhere.kestrel.example.' });
  });

  it('names a fully qualified host (a final dot) without that dot, so a message never ends in ".."', async () => {
    const unresolved = await fetchPage('http://nowhere.kestrel.example./', publicName);
    assert.equal(!unresolved.ok && unresolved.error, 'Could not resolve nowhere.kestrel.example.');
    const withPort = await fetchPage('http://nowhere.kestrel.example.:8080/', publicName);
    assert.equal(!withPort.ok && withPort.error, 'Could not resolve nowhere.kestrel.example:8080.');
    const refused = await fetchPage('http://www.kestrel.example./', { ...publicName, resolveHost: async () => [{ address: '10.1.2.3', family: 4 }] });
    assert.match(!refused.ok ? refused.error : '', /^Refused to connect to www\.kestrel\.example \(10\.1\.2\.3\): it is a private address\.$/);
    assert.deepEqual(received, []);
  });
});
