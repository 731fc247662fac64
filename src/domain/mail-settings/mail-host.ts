// A mail server's host, reached through the private-address guard (src/net/address-guard.ts) and refused in words for the
// admin who set them; TLS still checks the name.
import { resolvePublicAddress, type RefusalWords } from '../../net/address-guard.ts';

export { AddressRefused } from '../../net/address-guard.ts';

const MAIL_WORDS: RefusalWords = {
  unresolved: (name) => `Could not resolve ${name}.`,
  noAddress: (name) => `${name} has no address to connect to.`,
  notPublic: (shown, article, reason) => `Refused to connect to ${shown}: it is ${article} ${reason} address. `
    + 'Set ALLOW_PRIVATE_HOSTS=true to allow mail servers on private networks.',
};

/** The address to dial for a mail server's `host`, or AddressRefused saying why not. */
export function resolveMailHost(host: string, allowPrivateHosts: boolean): Promise<string> {
  return resolvePublicAddress(host, allowPrivateHosts, MAIL_WORDS);
}
