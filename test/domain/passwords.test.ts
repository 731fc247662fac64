// Passwords are stored as scrypt hashes that carry their own cost. Tests hash at a lower cost (test/helpers.ts), so
// this file checks the cost leadrun itself uses, and that a hash of either cost is checked by what it carries.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashPassword, PASSWORD_HASH_N, setPasswordHashCostForTests, verifyPassword } from '../../src/domain/members/passwords.ts';

describe('password hashes', () => {
  let testN: number;
  before(() => { testN = setPasswordHashCostForTests(PASSWORD_HASH_N); });
  after(() => setPasswordHashCostForTests(testN));

  it('are scrypt at N=2^15, r=8, p=1 with a salt of their own, and check only the password they were made from', async () => {
    const [first, second] = [await hashPassword('correct horse battery'), await hashPassword('correct horse battery')];
    assert.match(first, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{86}==$/);
    assert.notEqual(first, second, 'each hash has its own salt');
    assert.equal(await verifyPassword('correct horse battery', first), true);
    assert.equal(await verifyPassword('correct horse batterY', first), false);
    assert.equal(await verifyPassword('correct horse battery', null), false, 'no hash: no password is right');
  });

  it('are checked at the cost each carries, whatever the cost of new hashes', async () => {
    setPasswordHashCostForTests(2 ** 10);
    const cheap = await hashPassword('correct horse battery');
    setPasswordHashCostForTests(PASSWORD_HASH_N);
    assert.match(cheap, /^scrypt\$1024\$8\$1\$/);
    assert.equal(await verifyPassword('correct horse battery', cheap), true);
    assert.equal(await verifyPassword('wrong horse battery', cheap), false);
    assert.equal(await verifyPassword('correct horse battery', 'bcrypt$10$abc'), false, 'another scheme is never taken');
  });
});
