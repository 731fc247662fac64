// The HTTP side of keyset pagination: a `cursor` query parameter in, a `Link: <…>; rel="next"` header out.
import type { FastifyReply } from 'fastify';
import { decodeCursor, encodeCursor, type Cursor } from '../domain/pagination.ts';

export function cursorParam(text: string | undefined): Cursor | null {
  return text ? decodeCursor(text) : null;
}

/** Links the next page, keeping the request's filters; nothing when this was the last page. */
export function linkNextPage(reply: FastifyReply, path: string, next: Cursor | null, query: Record<string, string | number | null | undefined>): void {
  if (!next) return;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== null && value !== undefined && name !== 'cursor') params.set(name, String(value));
  }
  params.set('cursor', encodeCursor(next));
  reply.header('link', `<${path}?${params}>; rel="next"`);
}
