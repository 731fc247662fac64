// Endpoint URLs pass the private-address guard of RESEARCH and the mail servers (DESIGN §7, §9): an admin's webhook
// must not turn leadrun into a probe of the network it runs in. A name is resolved once, checked, and the checked
// address is the one dialled, so a second lookup cannot answer differently.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { disallowedAddressReason } from '../../agent/website.ts';
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

/** The address to dial for the URL's host, or WebhookUrlRefused saying why not. */
export async function resolveEndpointHost(url: URL, allowPrivateHosts: boolean): Promise<string> {
  const name = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  let addresses: string[];
  if (isIP(name)) addresses = [name];
  else {
    try {
      addresses = (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      throw new WebhookUrlRefused(`names a host that does not resolve (${name})`);
    }
  }
  if (addresses.length === 0) throw new WebhookUrlRefused(`names a host without an address (${name})`);
  if (!allowPrivateHosts) {
    for (const address of addresses) {
      const reason = disallowedAddressReason(address);
      if (reason !== null) {
        const shown = name === address ? address : `${name} (${address})`;
        const article = /^[aeiou]/i.test(reason) ? 'an' : 'a';
        throw new WebhookUrlRefused(`points to ${shown}, ${article} ${reason} address; webhooks reach only public addresses unless ALLOW_PRIVATE_HOSTS=true`);
      }
    }
  }
  return addresses[0]!;
}
