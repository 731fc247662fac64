// The web UI: the React app built into web/dist (npm install builds it), served on the API's origin. Its pages are
// client-side routes, so each of them answers with index.html; the hashed assets are cached for a year, and sent
// compressed (Brotli, else gzip, as the build wrote them beside each script and style sheet) to a browser that takes it.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app-instance.ts';
import { APP_PAGES, ENTRY_PAGES, NOT_APP_PREFIXES } from '../../ui/app-pages.ts';

export const WEB_DIST = path.resolve(import.meta.dirname, '../../../../web/dist');


const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>leadrun</title>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>The web UI has not been built</h1><p>Run <code>npm run build:web</code> (npm install does it), then reload.
The API is at <a href="/docs">/docs</a>.</p></body></html>`;

/** The app's index.html, read once; sent for each of its pages, and with 404 for a path that is none of them. */
export interface AppPageSender {
  readonly built: boolean;
  send(reply: FastifyReply, status?: number): Promise<FastifyReply>;
}

export function appPageSender(): AppPageSender {
  const built = existsSync(path.join(WEB_DIST, 'index.html'));
  let index: string | null = null;
  return {
    built,
    async send(reply, status = 200) {
      reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
      if (!built) return reply.code(status === 404 ? 404 : 503).send(NOT_BUILT);
      index ??= await readFile(path.join(WEB_DIST, 'index.html'), 'utf8');
      return reply.code(status).send(index);
    },
  };
}

/**
 * Whether a path the server does not know should get the app (which shows its own not-found page) rather than a
 * JSON problem: a person's GET of a page, not a program's call to the API or a missing file of the build.
 */
export function isAppPath(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const pathname = request.url.split('?')[0] ?? '';
  return !NOT_APP_PREFIXES.some((prefix) => pathname.startsWith(prefix) || `${pathname}/` === prefix);
}

export default async function webApp(app: AppInstance, { pages }: { pages: AppPageSender }): Promise<void> {
  if (pages.built) {
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
  for (const url of [...ENTRY_PAGES, ...APP_PAGES]) {
    app.get(url, { schema: { hide: true } }, (_request, reply) => pages.send(reply));
  }
}
