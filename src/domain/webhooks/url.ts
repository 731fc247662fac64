// Endpoint URLs: their shape (http or https, no credentials, bounded), and their host through the private-address
// guard of research and the mail servers (src/net/address-guard.ts), refused in words for the admin who set it.
import { resolvePublicAddress, type RefusalWords } from '../../net/address-guard.ts';
import { URL_MAX } from '../../schemas/webhooks.ts';

/** Why an endpoint URL is refused, in words fit for an admin. */
export class WebhookUrlRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookUrlRefused';
  }
}

/** The URL parsed, or WebhookUrlRefused: http or https, no user name or password, not too long. */
export function parseEndpointUrl(text: string): URL {
  if (text.length > URL_MAX) throw new WebhookUrlRefused(`is longer than ${URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlRefused('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookUrlRefused('must be an http or https URL');
  if (url.username || url.password) throw new WebhookUrlRefused('must not carry a user name or password');
  if (!url.hostname) throw new WebhookUrlRefused('has no host');
  return url;
}

const WEBHOOK_WORDS: RefusalWords = {
  unresolved: (name) => `names a host that does not resolve (${name})`,
  noAddress: (name) => `names a host without an address (${name})`,
  notPublic: (shown, article, reason) => `points to ${shown}, ${article} ${reason} address; webhooks reach only public addresses unless ALLOW_PRIVATE_HOSTS=true`,
};

/** The address to dial for the URL's host, or AddressRefused saying why not. */
export function resolveEndpointHost(url: URL, allowPrivateHosts: boolean): Promise<string> {
  return resolvePublicAddress(url.hostname, allowPrivateHosts, WEBHOOK_WORDS);
}
