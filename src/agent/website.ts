// Fetches one web page for RESEARCH, guarded against server-side request forgery (DESIGN §5).
//
// The address check runs on the address the socket is actually given: IP literals are checked here (Node skips
// `lookup` for them), host names inside the `lookup` hook after resolution, and the same again on every redirect,
// which is followed by hand. A site problem never throws: it comes back as `{ ok: false, error }`.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { articleOf, disallowedAddressReason, shownAddress } from '../net/address-guard.ts';
import { http } from '../net/node-http.ts';

export const USER_AGENT = 'leadrun-research/0.1 (+https://github.com/leadrun)';
export const DEFAULT_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 3;

export type FetchedPage =
  | { ok: true; url: string; status: number; html: string }
  | { ok: false; url: string; status: number | null; error: string };

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export interface FetchPageOptions {
  /** Lifts the address check (config RESEARCH_ALLOW_PRIVATE_HOSTS, for tests against 127.0.0.1 only). */
  allowPrivateHosts: boolean;
  /** Total deadline for the fetch, redirects and body included. */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Replaces the system resolver; the addresses it returns are checked like any others. */
  resolveHost?: ResolveHost;
  /**
   * Test seam, never set in production: the address dialled for one that passed the check. Lets a test treat a
   * name as public while its packets stay on loopback.
   */
  dialAddress?: (checked: ResolvedAddress) => ResolvedAddress;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** A site problem with a message fit to show a user. */
class PageError extends Error {
  readonly status: number | null;
  constructor(message: string, status: number | null = null) {
    super(message);
    this.status = status;
  }
}

/** A host as a person reads it: the final dot of a fully qualified name (`acme.co.uk.`) is left out. */
function shownHost(host: string): string {
  return host.replace(/\.(?=:\d+$|$)/, '');
}

function refuseAddress(host: string, address: string, reason: string): PageError {
  return new PageError(`Refused to connect to ${shownAddress(shownHost(host), address)}: it is ${articleOf(reason)} ${reason} address.`);
}

const systemResolve: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/** The `lookup` handed to the socket: resolves, refuses the whole name if any address is disallowed. */
function guardedLookup(options: FetchPageOptions): LookupFunction {
  const resolveHost = options.resolveHost ?? systemResolve;
  return (hostname, lookupOptions, callback) => {
    resolveHost(hostname)
      .then((resolved) => {
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const addresses = resolved.filter((a) => wanted === 0 || a.family === wanted);
        if (addresses.length === 0) throw new PageError(`${shownHost(hostname)} has no address to connect to.`);
        if (!options.allowPrivateHosts) {
          for (const a of addresses) {
            const reason = disallowedAddressReason(a.address);
            if (reason) throw refuseAddress(hostname, a.address, reason);
          }
        }
        return options.dialAddress ? addresses.map(options.dialAddress) : addresses;
      })
      .then(
        (addresses) => {
          if (lookupOptions.all) callback(null, addresses);
          else callback(null, addresses[0]!.address, addresses[0]!.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, ''),
      );
  };
}

/** Parses a URL and checks what can be checked before connecting: the scheme and an IP-literal host. */
function checkTarget(raw: string, options: FetchPageOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PageError(`"${raw}" is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PageError(`Only http and https pages can be fetched, not ${url.protocol.replace(/:$/, '')}.`);
  }
  const host = bareHost(url);
  if (!options.allowPrivateHosts && isIP(host) !== 0) {
    const reason = disallowedAddressReason(host);
    if (reason) throw refuseAddress(host, host, reason);
  }
  return url;
}

/** The URL's host without IPv6 brackets, as a socket wants it. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function send(url: URL, options: FetchPageOptions, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : http.request;
    const req = request(
      {
        protocol: url.protocol,
        hostname: bareHost(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: {
          'user-agent': USER_AGENT,
          accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
          'accept-language': 'en;q=1, *;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
        // A fresh socket per request: a pooled one could have been connected under another check.
        agent: false,
        lookup: guardedLookup(options),
        signal,
      },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

function decoded(response: IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  if (!decoder) return response;
  pipeline(response, decoder, () => {});
  return decoder;
}

/** Reads the body, counting decoded bytes so a compressed bomb stops at the same limit. */
async function readBody(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new PageError(tooLarge(maxBytes), response.statusCode);
  const stream = decoded(response);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) {
      stream.destroy();
      response.destroy();
      throw new PageError(tooLarge(maxBytes), response.statusCode);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function tooLarge(maxBytes: number): string {
  const size = maxBytes % (1024 * 1024) === 0 ? `${maxBytes / (1024 * 1024)} MiB` : `${maxBytes} bytes`;
  return `The page is larger than ${size}; it was not read.`;
}

function parseContentType(header: string | undefined): { mime: string | null; charset: string | null } {
  if (!header) return { mime: null, charset: null };
  const [mime = '', ...params] = header.split(';');
  const charsetParam = params.map((p) => p.trim()).find((p) => p.toLowerCase().startsWith('charset='));
  const charset = charsetParam ? charsetParam.slice('charset='.length).replace(/^["']|["']$/g, '').trim() : null;
  return { mime: mime.trim().toLowerCase() || null, charset: charset || null };
}

function decodeHtml(body: Buffer, headerCharset: string | null): string {
  // Without a charset in the header, a <meta charset> in the first bytes decides, as in a browser.
  const head = body.subarray(0, 2048).toString('latin1');
  const metaCharset = /<meta[^>]+charset\s*=\s*["']?\s*([\w:.-]+)/i.exec(head)?.[1] ?? null;
  for (const label of [headerCharset, metaCharset, 'utf-8']) {
    if (!label) continue;
    try {
      return new TextDecoder(label).decode(body);
    } catch {
      // An unknown label: try the next one.
    }
  }
  return body.toString('utf8');
}

function looksLikeHtml(body: Buffer): boolean {
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(body.subarray(0, 512).toString('latin1'));
}

function describeFailure(error: unknown, target: string): string {
  if (error instanceof PageError) return error.message;
  const host = shownHost(target);
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NODATA':
    case 'EAI_NONAME':
      return `Could not resolve ${host}.`;
    case 'ECONNREFUSED':
      return `${host} refused the connection.`;
    case 'ECONNRESET':
      return `${host} closed the connection.`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${host} is unreachable.`;
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `${host} has an invalid TLS certificate (${code}).`;
    case 'Z_DATA_ERROR':
    case 'Z_BUF_ERROR':
      return `The page from ${host} could not be decompressed.`;
    default:
      return `Could not fetch the page from ${host}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Fetches one HTML page under the SSRF guard. Resolves with the final URL and the decoded HTML, or with a
 * readable error; it never rejects for a problem of the site.
 */
export async function fetchPage(url: string, options: FetchPageOptions): Promise<FetchedPage> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;

  let current = url;
  let status: number | null = null;
  let host = url;
  try {
    for (let redirects = 0; ; redirects++) {
      const target = checkTarget(current, options);
      host = target.host;
      const response = await send(target, options, signal);
      status = response.statusCode ?? null;

      const location = response.headers.location;
      if (status !== null && REDIRECT_STATUSES.has(status) && location) {
        response.destroy();
        if (redirects >= maxRedirects) throw new PageError(`More than ${maxRedirects} redirects; gave up.`, status);
        current = redirectTarget(location, target, status);
        continue;
      }
      if (status === null || status < 200 || status > 299) {
        response.destroy();
        const text = status === null ? '' : ` ${status} ${http.STATUS_CODES[status] ?? ''}`.trimEnd();
        throw new PageError(`The site answered HTTP${text || ' without a status'}.`, status);
      }

      const { mime, charset } = parseContentType(response.headers['content-type']);
      if (mime !== null && !HTML_TYPES.has(mime)) {
        response.destroy();
        throw new PageError(`The page is ${mime}, not HTML; only HTML pages are read.`, status);
      }
      const body = await readBody(response, maxBytes);
      if (mime === null && !looksLikeHtml(body)) {
        throw new PageError('The page has no content type and does not look like HTML.', status);
      }
      return { ok: true, url: target.href, status, html: decodeHtml(body, charset) };
    }
  } catch (error) {
    let message: string;
    if (deadline.aborted) message = `The site did not answer within ${formatDuration(timeoutMs)}.`;
    else if (options.signal?.aborted) message = 'The fetch was cancelled.';
    else message = describeFailure(error, host);
    return { ok: false, url: current, status: error instanceof PageError ? error.status ?? status : status, error: message };
  }
}

function redirectTarget(location: string, from: URL, status: number): string {
  try {
    return new URL(location, from).href;
  } catch {
    throw new PageError(`The site redirected to an invalid address: ${location.slice(0, 200)}`, status);
  }
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
