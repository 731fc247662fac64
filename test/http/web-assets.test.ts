// The web UI's scripts and style sheets are sent compressed, as the build wrote them beside each file
// (web/vite.config.ts), to a browser that takes it, and as they are to one that does not (src/http/routes/ui/web-app.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { WEB_DIST } from '../../src/http/routes/ui/web-app.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { ensureWebBuild } from '../web/support.ts';

interface Answer { status: number; headers: IncomingHttpHeaders; body: Buffer }

/** The bytes as sent: node:http decodes nothing. */
function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe("the web UI's scripts and style sheets", () => {
  let t: TestApp;
  let assets: string[];
  before(async () => {
    await ensureWebBuild();
    t = await startTestApp(BACKENDS[0] ?? 'pglite');
    const page = await get(`${t.url}/leads`, { 'accept-encoding': 'br' });
    assets = [...page.body.toString('utf8').matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  });
  after(() => t?.close());

  it('go in Brotli to a browser that takes it, else in gzip, else as they are; each cached a year', async () => {
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), `the page links its script and style: ${assets}`);
    for (const asset of assets) {
      const file = readFileSync(path.join(WEB_DIST, asset));
      const type = asset.endsWith('.js') ? /^text\/javascript|^application\/javascript/ : /^text\/css/;
      const sent = async (acceptEncoding: string | null, encoding: string | undefined, decode: (body: Buffer) => Buffer) => {
        const answer = await get(`${t.url}${asset}`, acceptEncoding === null ? {} : { 'accept-encoding': acceptEncoding });
        const context = `${asset}, Accept-Encoding ${acceptEncoding}`;
        assert.equal(answer.status, 200, context);
        assert.equal(answer.headers['content-encoding'], encoding, context);
        assert.match(answer.headers['content-type'] ?? '', type, context);
        assert.match(answer.headers.vary ?? '', /accept-encoding/i, `${context}: a cache keeps each encoding apart`);
        assert.equal(answer.headers['cache-control'], 'public, max-age=31536000, immutable', context);
        assert.ok(decode(answer.body).equals(file), `${context}: the file's own bytes`);
        return answer.body.length;
      };
      const brotli = await sent('gzip, deflate, br, zstd', 'br', brotliDecompressSync);
      const gzip = await sent('gzip, deflate', 'gzip', gunzipSync);
      assert.equal(await sent(null, undefined, (body) => body), file.length);
      assert.equal(await sent('identity', undefined, (body) => body), file.length);
      assert.ok(brotli < file.length / 3 && gzip < file.length / 2, `${asset}: ${file.length} bytes, ${brotli} in Brotli, ${gzip} in gzip`);
    }
  });

  it('leave the pages themselves as they are', async () => {
    const page = await get(`${t.url}/runs`, { 'accept-encoding': 'br, gzip' });
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-encoding'], undefined);
    assert.ok(page.body.toString('utf8').includes('<div id="root">') || page.body.toString('utf8').includes('<script'));
  });
});
