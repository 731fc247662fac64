// The web UI: the React app built into web/dist (npm install builds it), served on the API's origin. Its pages are
// client-side routes, so each of them answers with index.html; the hashed assets are cached for a year, and sent
// compressed (Brotli, else gzip, as the build wrote them beside each script and style sheet) to a browser that takes it.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { AppInstance } from '../app.ts';

export const WEB_DIST = path.resolve(import.meta.dirname, '../../../web/dist');

/** The pages of the UI (see web/src/): every one is index.html, and the app shows the right page. */
const PAGES = [
  '/', '/setup', '/signin', '/leads', '/leads/:id', '/runs', '/runs/:id', '/runs/:id/trace', '/runs/batches/:id',
  '/settings', '/settings/keys', '/settings/members', '/settings/audit', '/settings/usage',
  '/settings/email', '/settings/profile', '/reset-password',
];

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>leadrun</title>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>The web UI has not been built</h1><p>Run <code>npm run build:web</code> (npm install does it), then reload.
The API is at <a href="/docs">/docs</a>.</p></body></html>`;

export default async function webApp(app: AppInstance): Promise<void> {
  const built = existsSync(path.join(WEB_DIST, 'index.html'));
  if (built) {
    await app.register(fastifyStatic, {
      root: WEB_DIST,
      prefix: '/',
      index: false,
      wildcard: false,
      preCompressed: true,
      setHeaders: (res, file) => {
        res.header('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  }
  let index: string | null = null;
  for (const url of PAGES) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => {
      reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
      if (!built) return reply.code(503).send(NOT_BUILT);
      index ??= await readFile(path.join(WEB_DIST, 'index.html'), 'utf8');
      return reply.send(index);
    });
  }
}
