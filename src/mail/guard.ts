// Mail servers are reached through the same private-address guard as RESEARCH (DESIGN §7): a workspace admin's
// settings must not turn leadrun into a probe of the network it runs in. The name is resolved once and the checked
// address is what the client dials, so a second lookup cannot answer differently; TLS still checks the name.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { disallowedAddressReason } from '../agent/website.ts';

export class MailHostRefused extends Error {
  /** True when the name did not resolve: nothing is known of where it points, which is not a refusal of it. */
  readonly unresolved: boolean;

  constructor(message: string, options: { unresolved?: boolean } = {}) {
    super(message);
    this.name = 'MailHostRefused';
    this.unresolved = options.unresolved ?? false;
  }
}

/** The address to dial for `host`, or MailHostRefused saying why not, in words fit for an admin. */
export async function resolveMailHost(host: string, allowPrivateHosts: boolean): Promise<string> {
  const name = host.replace(/\.$/, '');
  let addresses: string[];
  if (isIP(name)) addresses = [name];
  else {
    try {
      addresses = (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      throw new MailHostRefused(`Could not resolve ${name}.`, { unresolved: true });
    }
  }
  if (addresses.length === 0) throw new MailHostRefused(`${name} has no address to connect to.`, { unresolved: true });
  if (!allowPrivateHosts) {
    for (const address of addresses) {
      const reason = disallowedAddressReason(address);
      if (reason !== null) {
        const shown = name === address ? address : `${name} (${address})`;
        const article = /^[aeiou]/i.test(reason) ? 'an' : 'a';
        throw new MailHostRefused(`Refused to connect to ${shown}: it is ${article} ${reason} address. ` +
          'Set ALLOW_PRIVATE_HOSTS=true to allow mail servers on private networks.');
      }
    }
  }
  return addresses[0]!;
}
