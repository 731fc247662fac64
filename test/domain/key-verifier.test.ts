// KeyVerifier: the one-second cache of key look-ups. Concurrent misses for one key share a look-up, and a
// revocation heard while a look-up runs is never undone by that look-up's answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { systemClock } from '../../src/clock.ts';
import { createKey, KeyVerifier, keyDigest, revokeKey } from '../../src/domain/keys/keys.ts';
import { createWorkspace } from '../../src/domain/workspaces/workspaces.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers.ts';

/** Counts the statements that read api_keys, and can hold their answers until released. */
function watchKeyLookups() {
  let release: (() => void) | null = null;
  let held: Promise<void> | null = null;
  const watch = {
    lookups: 0,
    hold() { held = new Promise((resolve) => { release = resolve; }); },
    release() { release?.(); held = null; },
    plugin: {
      transformQuery(args) {
        if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node).includes('"api_keys"')) watch.lookups++;
        return args.node;
      },
      async transformResult(args) {
        if (held) await held;
        return args.result;
      },
    } satisfies KyselyPlugin,
  };
  return watch;
}

for (const kind of BACKENDS) {
  describe(`${kind}: KeyVerifier`, () => {
    let t: TestDatabase;
    let workspaceId: string;
    before(async () => {
      t = await createTestDatabase(kind);
      workspaceId = (await createWorkspace(t.database.db, { name: 'Keys' }, systemClock)).id;
    });
    after(() => t?.drop());

    it('answers 100 simultaneous checks of one key with one look-up, then from the cache', async () => {
      const { key } = await createKey(t.database.db, workspaceId, { name: 'a', scopes: ['leads:read'], createdByUserId: null }, systemClock);
      const watch = watchKeyLookups();
      const verifier = new KeyVerifier(t.database.db.withPlugin(watch.plugin));
      const answers = await Promise.all(Array.from({ length: 100 }, () => verifier.verify(key)));
      assert.ok(answers.every((a) => a?.workspaceId === workspaceId));
      assert.equal(watch.lookups, 1);
      await verifier.verify(key);
      assert.equal(watch.lookups, 1);
    });

    it('looks a key up again once its entry is older than the TTL', async () => {
      const { key } = await createKey(t.database.db, workspaceId, { name: 'b', scopes: ['leads:read'], createdByUserId: null }, systemClock);
      const watch = watchKeyLookups();
      const verifier = new KeyVerifier(t.database.db.withPlugin(watch.plugin), { ttlMs: 0 });
      await verifier.verify(key);
      await verifier.verify(key);
      assert.equal(watch.lookups, 2);
    });

    it('refuses a revoked key at once when the revocation is heard while its look-up is running', async () => {
      const created = await createKey(t.database.db, workspaceId, { name: 'c', scopes: ['leads:read'], createdByUserId: null }, systemClock);
      const watch = watchKeyLookups();
      const verifier = new KeyVerifier(t.database.db.withPlugin(watch.plugin));
      watch.hold();
      const during = verifier.verify(created.key); // reads the key while it is still active, answers later
      while (watch.lookups === 0) await new Promise((resolve) => setImmediate(resolve));
      await revokeKey(t.database.db, created.id, systemClock);
      verifier.forget(keyDigest(created.key)); // what the NOTIFY of the revocation does
      watch.release();
      await during; // concurrent with the revocation: either answer is right for it
      assert.equal(await verifier.verify(created.key), null, 'the answer read before the revocation was not kept');
      assert.equal(watch.lookups, 2);
    });

    it('does not cache a failed look-up', async () => {
      const { key } = await createKey(t.database.db, workspaceId, { name: 'd', scopes: ['leads:read'], createdByUserId: null }, systemClock);
      let fail = true;
      const verifier = new KeyVerifier(t.database.db.withPlugin({
        transformQuery: (args) => args.node,
        async transformResult(args) {
          if (fail) throw new Error('database away');
          return args.result;
        },
      }));
      await assert.rejects(verifier.verify(key), /database away/);
      fail = false;
      assert.equal((await verifier.verify(key))?.workspaceId, workspaceId);
    });
  });
}
