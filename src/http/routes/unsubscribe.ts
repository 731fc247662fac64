// /unsubscribe/{token}: the link every e-mail carries (DESIGN §15). Public: no key, no cookie, no CSRF token, since
// mail providers POST it for the recipient (RFC 8058: the body `List-Unsubscribe=One-Click`) and the token alone
// names the workspace and address. A POST suppresses the address and answers 200, again and again; a GET only shows
// a page with one button that posts, since mail scanners open links. A token leadrun did not make gets a 404 page and
// changes nothing. The pages are leadrun's own: no script, no resource from elsewhere, readable on a phone.
import { createHash } from 'node:crypto';
import { normalizeIP } from '@fastify/rate-limit';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../app-instance.ts';
import { attemptLimit } from '../attempt-limit.ts';
import { problem } from '../../schemas/index.ts';
import { writeAudit } from '../../domain/audit/audit.ts';
import { addAddress } from '../../domain/suppressions/suppress.ts';
import { tokenHolder } from '../../domain/suppressions/tokens.ts';

/** Posts allowed per address in the window (a provider retrying, a person pressing twice), and lookups per client. */
export const UNSUBSCRIBES_PER_ADDRESS = 20;
const LOOKUPS_PER_CLIENT = 200;
/** A one-click body is 26 bytes; a form's is not much more. */
const BODY_MAX = 2048;

const STYLE = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:0 1rem;background:#f6f7f9;color:#1d2330}
main{max-width:28rem;margin:12vh auto 0;padding:2rem 1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px #0002}
h1{font-size:1.35rem;margin:0 0 .75rem}p{margin:0 0 1.25rem;overflow-wrap:anywhere}
button{font:inherit;font-weight:600;width:100%;padding:.8rem 1rem;border:0;border-radius:8px;background:#1f4fd8;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #93b4ff;outline-offset:2px}.muted{color:#5a6475;font-size:.9rem;margin:1.25rem 0 0}`;
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;
/** The pages' own policy: nothing but their inline style sheet, and a form that posts to this origin. */
const CSP = `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `a***@example.com`: enough for the person to know the address, not enough to read it off a shared screen. */
export function maskedAddress(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  return `${local.slice(0, Math.min(2, Math.max(1, local.length - 1)))}***${email.slice(at)}`;
}

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">
<title>${escape(title)}</title><style>${STYLE}</style></head><body><main><h1>${escape(title)}</h1>${body}</main></body></html>`;
  return reply.code(status).header('content-security-policy', CSP).header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer').type('text/html; charset=utf-8').send(html);
}

const notFoundPage = (reply: FastifyReply) => page(reply, 404, 'This link does not work',
  '<p>The unsubscribe link is not complete or not one we sent. Copy the whole link from the e-mail and try again.</p>');

const TokenParams = Type.Object({ token: Type.String({ maxLength: 100, description: 'The token from the e-mail\'s link.' }) });
const Html = (description: string) => ({ description, content: { 'text/html': { schema: Type.String({ description: 'An HTML page.' }) } } });

export default async function unsubscribeRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;
  const perClient = attemptLimit(app, 'unsubscribe-lookup', LOOKUPS_PER_CLIENT, (request) => normalizeIP(request.ip));
  const perAddress = attemptLimit(app, 'unsubscribe', UNSUBSCRIBES_PER_ADDRESS, (request) => (request as FastifyRequest & { unsubscribeKey?: string }).unsubscribeKey ?? '');
  // Mail providers post a form; the body is read as text and otherwise ignored: the token is the request.
  app.addContentTypeParser(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'],
    { parseAs: 'string', bodyLimit: BODY_MAX }, (_request, body, done) => done(null, body));

  app.get('/unsubscribe/:token', {
    schema: {
      // The link of an e-mail, not an operation of the API: left out of its document (README describes it).
      hide: true,
      operationId: 'showUnsubscribePage',
      summary: 'The unsubscribe page',
      description: 'Names the (masked) address with one button that posts to the same address. Changes nothing: mail scanners open links.',
      tags: ['Unsubscribe'],
      params: TokenParams,
      response: { 200: Html('The page with its button.'), 404: Html('The token is not one leadrun made.'), 429: problem('Too many requests from this client.') },
    },
  }, async (request, reply) => {
    await perClient(request);
    const holder = await tokenHolder(db, request.params.token);
    if (!holder) return notFoundPage(reply);
    const action = `/unsubscribe/${encodeURIComponent(request.params.token)}`;
    return page(reply, 200, 'Unsubscribe', `<p>Stop e-mails to <strong>${escape(maskedAddress(holder.email))}</strong>?</p>
<form method="post" action="${escape(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button></form><p class="muted">You will not be written to again from this sender.</p>`);
  });

  app.post('/unsubscribe/:token', {
    bodyLimit: BODY_MAX,
    schema: {
      hide: true,
      operationId: 'unsubscribe',
      summary: 'Unsubscribe (one click)',
      description: 'As RFC 8058 has mail providers call it: no key, cookie or CSRF token; the body `List-Unsubscribe=One-Click` '
        + '(application/x-www-form-urlencoded or multipart/form-data) or empty. Suppresses the address in its workspace '
        + '(reason `unsubscribed`, source `unsubscribe_link`), stops its sequences, and answers 200 every time; never a '
        + 'redirect. Limited per address.',
      tags: ['Unsubscribe'],
      params: TokenParams,
      response: {
        200: Html('Unsubscribed (or already).'), 404: Html('The token is not one leadrun made; nothing changed.'),
        413: problem('The body is over 2 KiB.'), 429: problem('Too many requests for this address or from this client.'),
      },
    },
  }, async (request, reply) => {
    await perClient(request);
    const holder = await tokenHolder(db, request.params.token);
    if (!holder) return notFoundPage(reply);
    (request as FastifyRequest & { unsubscribeKey?: string }).unsubscribeKey = `${holder.workspaceId}:${holder.email}`;
    await perAddress(request);
    const at = clock.now();
    await db.transaction().execute(async (trx) => {
      const entry = await addAddress(trx, { workspaceId: holder.workspaceId, email: holder.email, reason: 'unsubscribed', source: 'unsubscribe_link', at });
      if (!entry) return;
      await writeAudit(trx, {
        workspaceId: holder.workspaceId, source: 'system', action: 'recipient.unsubscribed', target: { type: 'suppression', id: entry.id },
        outcome: 'success', status: 200, requestId: request.id, occurredAt: at,
      });
    });
    return page(reply, 200, 'You are unsubscribed', `<p><strong>${escape(maskedAddress(holder.email))}</strong> will not be written to again from this sender.</p>`);
  });
}
