// DATA_DIR is private to the user who runs leadrun (issue 38, finding 7): a folder that exists already is made 0700
// with its pgdata at every start, what leadrun creates in it is for that user alone, and a folder that cannot be
// made private (another user's) is refused with one line.
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertCleanFailure, runLeadrun, tempDir } from './support.ts';

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every folder under `dir` that a user other than its owner may read, enter or write. The files are not looked at:
 * PGlite sets their modes itself (0666 for some), and the folders closed to others are what keeps them private.
 */
async function foldersOpenToOthers(dir: string): Promise<string[]> {
  const open: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory() && (await modeOf(file)) & 0o077) open.push(`${file} ${(await modeOf(file)).toString(8)}`);
  }
  return open;
}

describe('DATA_DIR is private to the user who runs leadrun', { concurrency: 2 }, () => {
  let scratch: { path: string; remove(): Promise<void> };
  before(async () => {
    scratch = await tempDir();
  });
  after(() => scratch?.remove());

  it('an existing DATA_DIR and its pgdata, 0755, are 0700 after a command', async () => {
    const dataDir = await tempDir('leadrun-open-', { migrated: true });
    try {
      await chmod(dataDir.path, 0o755);
      await chmod(path.join(dataDir.path, 'pgdata'), 0o755);
      const result = await runLeadrun(['workspace', 'list', '--json'], { DATA_DIR: dataDir.path });
      assert.equal(result.code, 0, result.stderr);
      assert.equal((await modeOf(dataDir.path)).toString(8), '700');
      assert.equal((await modeOf(path.join(dataDir.path, 'pgdata'))).toString(8), '700');
    } finally {
      await dataDir.remove();
    }
  });

  it('the folders bin/leadrun makes in a new DATA_DIR are private (umask 077)', { timeout: 120_000 }, async () => {
    const dataDir = path.join(scratch.path, 'fresh');
    const result = await runLeadrun(['migrate'], { DATA_DIR: dataDir }, { process: true, timeoutMs: 120_000 });
    assert.equal(result.code, 0, result.stderr);
    assert.equal((await modeOf(dataDir)).toString(8), '700');
    assert.equal((await modeOf(path.join(dataDir, 'pgdata'))).toString(8), '700');
    assert.deepEqual(await foldersOpenToOthers(dataDir), []);
  });

  for (const which of ['DATA_DIR', 'pgdata']) {
    it(`${which} owned by another user: refused with one line, exit 1`, async () => {
      if (process.getuid?.() !== 0) return; // Only root can give a folder away to make the case.
      const dataDir = path.join(scratch.path, `foreign-${which}`);
      await mkdir(path.join(dataDir, 'pgdata'), { recursive: true });
      await chown(which === 'DATA_DIR' ? dataDir : path.join(dataDir, 'pgdata'), 65534, 65534);
      for (const args of [['serve'], ['workspace', 'list']]) {
        const result = await runLeadrun(args, { DATA_DIR: dataDir, PORT: '0' }, { timeoutMs: 20_000 });
        assert.equal(result.code, 1, result.stderr);
        const what = which === 'DATA_DIR' ? 'it' : 'pgdata';
        const line = assertCleanFailure(result, new RegExp(`^leadrun: DATA_DIR ${escape(dataDir)} cannot be made `
          + `private: ${what} belongs to user 65534, not to user 0 who runs leadrun; change its owner`));
        assert.equal(result.stderr, `${line}\n`, 'exactly one line');
      }
    });
  }
});
