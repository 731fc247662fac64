// The private-address guard (DESIGN §5, §7, §9): research, mail servers and webhook endpoints reach only public
// unicast addresses unless ALLOW_PRIVATE_HOSTS is set, so that what a user or an admin types cannot turn leadrun into
// a probe of the network it runs in. A name is resolved once and the checked address is the one dialled, so a second
// lookup cannot answer differently.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254']);

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
  uniqueLocal: 'unique-local',
  ipv4Compatible: 'IPv4-compatible',
  rfc6052: 'NAT64',
  rfc6145: 'IPv4-translated',
  '6to4': '6to4',
  teredo: 'Teredo',
};

/**
 * Why an address may not be connected to, or null when it is an ordinary public unicast address.
 * IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
export function disallowedAddressReason(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return 'unparseable';
  }
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (METADATA_ADDRESSES.has(ip.toNormalizedString()) || METADATA_ADDRESSES.has(ip.toString())) return 'cloud metadata';
  const range = ip.range();
  if (range !== 'unicast') return RANGE_NAMES[range] ?? range;
  // ::a.b.c.d (deprecated IPv4-compatible) has no named range in ipaddr.js, so it reads as unicast.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) {
    return RANGE_NAMES.ipv4Compatible ?? 'reserved';
  }
  return null;
}

/** `a` or `an` before a range's name: "a loopback address", "an IPv4-compatible address". */
export function articleOf(reason: string): 'a' | 'an' {
  return /^[aeiou]/i.test(reason) ? 'an' : 'a';
}

/** A host and the address it resolved to, as a message shows them: `mail.acme.co (10.0.0.5)`, or the address alone. */
export function shownAddress(host: string, address: string): string {
  return host === address ? address : `${host} (${address})`;
}

/** Refused by the guard: a name that does not resolve, one with no address, or an address that is not public. */
export class AddressRefused extends Error {
  /** True when the name did not resolve: nothing is known of where it points, which is not a refusal of it. */
  readonly unresolved: boolean;

  constructor(message: string, options: { unresolved?: boolean } = {}) {
    super(message);
    this.name = 'AddressRefused';
    this.unresolved = options.unresolved ?? false;
  }
}

/** How a caller says each refusal, in words fit for the person who set the host (an admin, a user). */
export interface RefusalWords {
  unresolved(name: string): string;
  noAddress(name: string): string;
  notPublic(shown: string, article: 'a' | 'an', reason: string): string;
}

/** The address to dial for `host` (a name or an IP literal), or AddressRefused saying why not in the caller's words. */
export async function resolvePublicAddress(host: string, allowPrivateHosts: boolean, words: RefusalWords): Promise<string> {
  const name = host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  let addresses: string[];
  if (isIP(name)) addresses = [name];
  else {
    try {
      addresses = (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      throw new AddressRefused(words.unresolved(name), { unresolved: true });
    }
  }
  if (addresses.length === 0) throw new AddressRefused(words.noAddress(name), { unresolved: true });
  if (!allowPrivateHosts) {
    for (const address of addresses) {
      const reason = disallowedAddressReason(address);
      if (reason !== null) throw new AddressRefused(words.notPublic(shownAddress(name, address), articleOf(reason), reason));
    }
  }
  return addresses[0]!;
}
