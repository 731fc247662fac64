// The private-address guard research, mail servers and webhook endpoints share: which addresses it refuses, and how a
// caller's words say so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressRefused, disallowedAddressReason, resolvePublicAddress, type RefusalWords } from '../../src/net/address-guard.ts';

describe('disallowedAddressReason', () => {
  it('allows only public unicast addresses', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '2a00:1450:4001:80e::200e']) {
      assert.equal(disallowedAddressReason(address), null, address);
    }
    for (const address of ['127.0.0.2', '::ffff:7f00:1', '::7f00:1', '64:ff9b::a00:1', '2002:a00:1::', '192.0.2.1', '198.18.0.1', 'ff02::1', 'nonsense']) {
      assert.notEqual(disallowedAddressReason(address), null, address);
    }
  });
});

describe('resolvePublicAddress', () => {
  const words: RefusalWords = {
    unresolved: (name) => `unresolved ${name}`,
    noAddress: (name) => `no address ${name}`,
    notPublic: (shown, article, reason) => `${shown} is ${article} ${reason} address`,
  };

  it('gives back a public address as it is, and an IP literal in brackets or with a final dot as the address', async () => {
    assert.equal(await resolvePublicAddress('93.184.215.14', false, words), '93.184.215.14');
    assert.equal(await resolvePublicAddress('[2606:4700::1111]', false, words), '2606:4700::1111');
  });

  it('refuses a private, loopback or metadata address in the caller\'s words, unless private hosts are allowed', async () => {
    await assert.rejects(resolvePublicAddress('127.0.0.1', false, words), (error: unknown) =>
      error instanceof AddressRefused && !error.unresolved && error.message === '127.0.0.1 is a loopback address');
    await assert.rejects(resolvePublicAddress('169.254.169.254', false, words), /169\.254\.169\.254 is a cloud metadata address/);
    await assert.rejects(resolvePublicAddress('::ffff:10.0.0.1', false, words), /is a private address/);
    assert.equal(await resolvePublicAddress('127.0.0.1', true, words), '127.0.0.1');
  });

  it('says a name that does not resolve is unresolved, not refused', async () => {
    await assert.rejects(resolvePublicAddress('no-such-host.invalid', false, words), (error: unknown) =>
      error instanceof AddressRefused && error.unresolved && error.message === 'unresolved no-such-host.invalid');
  });
});
