// Against DNS rebinding: the web UI's API answers only requests addressed to one of leadrun's own names. An
// attacker who points attacker.example at 127.0.0.1 makes a victim's browser reach leadrun from a page of that
// name, same-origin with itself; its requests still say `Host: attacker.example`, and that is what is checked.
// Requests with a bearer key are not held to this: a service may reach the API by an internal name.
import { isIPv4 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const UI_API = '/ui/api';
// A Host header: a name or an IPv4 address, or an IPv6 address in brackets, then an optional port.
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/i;

/** The name in a Host header, lower-cased, without its port or a trailing dot; null when it is not a host. */
export function hostnameOf(host: string | undefined): string | null {
  const match = host ? HOST_HEADER.exec(host) : null;
  return match?.[1] ? match[1].toLowerCase().replace(/\.$/, '') : null;
}

/**
 * One of leadrun's own names, with any port: PUBLIC_URL's host, a loopback name, or one in ALLOWED_HOSTS. Ports
 * are not compared: the name is what a rebinding attacker controls, and port forwarding changes the port.
 */
export function isOwnHostname(config: Pick<Config, 'publicUrl' | 'allowedHosts'>, hostname: string | null): boolean {
  if (hostname === null) return false;
  return LOOPBACK_NAMES.includes(hostname) || config.allowedHosts.includes(hostname) || new URL(config.publicUrl).hostname === hostname;
}

/** A listening address (HOST) that only this machine can reach: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(host: string): boolean {
  const name = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name === '::1' || name === '0:0:0:0:0:0:0:1') return true;
  const v4 = /^::ffff:(.+)$/.exec(name)?.[1] ?? name;
  return isIPv4(v4) && v4.startsWith('127.');
}

/** An Origin header naming one of leadrun's own hosts, over http or https. */
export function isOwnOrigin(config: Pick<Config, 'publicUrl' | 'allowedHosts'>, origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  // An Origin header is a bare origin: anything more (a path, credentials) is not one a browser sent.
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) return false;
  return isOwnHostname(config, url.hostname);
}

export function misdirected(): AppError {
  return new AppError('misdirected_request',
    "The web UI does not answer under this host name: use leadrun's own address (PUBLIC_URL), or list the name in ALLOWED_HOSTS.");
}

/** A request of the web UI's API (`/ui/api/*`), known route or not. */
function isUiApi(request: FastifyRequest): boolean {
  if (request.routeOptions.url?.startsWith(`${UI_API}/`)) return true;
  const path = request.url.split('?', 1)[0] ?? '';
  return path === UI_API || path.startsWith(`${UI_API}/`);
}

/** onRequest, before authentication: nothing under /ui/api answers a request addressed to another name (421). */
export function refuseForeignHosts(config: Config) {
  return async function onRequest(request: FastifyRequest): Promise<void> {
    if (isUiApi(request) && !isOwnHostname(config, hostnameOf(request.host))) throw misdirected();
  };
}
