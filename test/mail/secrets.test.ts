// Sealed mail passwords (src/domain/secret-box.ts): AES-256-GCM bound to where the ciphertext is kept; the key from
// SECRETS_KEY, or made once into DATA_DIR/secrets.key with mode 0600, the same for every process that starts at once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadSecretBox, SecretBox } from '../../src/domain/secret-box.ts';

const SECRETS_MODULE = fileURLToPath(new URL('../../src/domain/secret-box.ts', import.meta.url));
const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadrun-secrets-'));
  dirs.push(dir);
  return dir;
};
after(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); });

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));
  const context = 'mail_settings:11111111-1111-4111-8111-111111111111:smtp_password';

  it('seals into a v1: text that does not show the plaintext, and opens it again, each time with a new IV', () => {
    for (const plaintext of ['hunter2', '', 'ünïcödé ✉️ pass', 'x'.repeat(5000)]) {
      const sealed = box.seal(plaintext, context);
      assert.match(sealed, /^v1:[A-Za-z0-9+/]+=*$/);
      if (plaintext.length > 3) assert.ok(!sealed.includes(plaintext) && !Buffer.from(sealed.slice(3), 'base64').includes(Buffer.from(plaintext)));
      assert.equal(box.open(sealed, context), plaintext);
      assert.notEqual(box.seal(plaintext, context), sealed, 'a fresh IV each time');
    }
  });

  it('does not open in another context, under another key, or once changed', () => {
    const sealed = box.seal('hunter2', context);
    assert.throws(() => box.open(sealed, context.replace('1111', '2222')), 'another workspace');
    assert.throws(() => box.open(sealed, context.replace('smtp_password', 'imap_password')), 'another field');
    assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, context), 'another key');
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    for (const at of [0, 12, 20, bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[at]! ^= 1;
      assert.throws(() => box.open(`v1:${changed.toString('base64')}`, context), `byte ${at} flipped`);
    }
    for (const bad of ['', 'v1:', 'v1:AAAA', 'v2:' + sealed.slice(3), sealed.slice(3), 'hunter2']) {
      assert.throws(() => box.open(bad, context), `${JSON.stringify(bad)} is not a sealed secret`);
    }
  });

  it('takes a 32-byte key only', () => {
    for (const length of [0, 16, 31, 33, 64]) assert.throws(() => new SecretBox(randomBytes(length)), /32 bytes/);
  });
});

describe('loadSecretBox', () => {
  it('makes DATA_DIR/secrets.key once, mode 0600, and reads the same key on every later start', () => {
    const dir = path.join(freshDir(), 'nested', 'data');
    const first = loadSecretBox(null, dir);
    const file = path.join(dir, 'secrets.key');
    assert.equal(statSync(file).mode & 0o777, 0o600, 'only the owner can read it');
    const key = readFileSync(file, 'utf8');
    assert.equal(Buffer.from(key.trim(), 'base64').length, 32);
    const sealed = first.seal('hunter2', 'c');
    const again = loadSecretBox(null, dir);
    assert.equal(again.open(sealed, 'c'), 'hunter2', 'a later start opens what an earlier one sealed');
    assert.equal(readFileSync(file, 'utf8'), key, 'the key file is not rewritten');
    assert.deepEqual(readdirSync(dir), ['secrets.key'], 'no draft file is left behind');
  });

  it('prefers SECRETS_KEY, and then neither reads nor makes a key file', () => {
    const dir = freshDir();
    const configured = randomBytes(32);
    const sealed = loadSecretBox(configured, dir).seal('hunter2', 'c');
    assert.deepEqual(readdirSync(dir), [], 'no key file made');
    assert.equal(new SecretBox(configured).open(sealed, 'c'), 'hunter2');
    // With a key file present too, SECRETS_KEY still wins.
    const fromFile = loadSecretBox(null, dir);
    assert.throws(() => fromFile.open(sealed, 'c'), 'the file\'s key is another key');
    assert.equal(loadSecretBox(configured, dir).open(sealed, 'c'), 'hunter2');
  });

  it('refuses a key file that does not hold a 32-byte key, rather than replacing it', () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, 'secrets.key'), 'c2hvcnQ=\n', { mode: 0o600 });
    assert.throws(() => loadSecretBox(null, dir), /32-byte/);
    assert.equal(readFileSync(path.join(dir, 'secrets.key'), 'utf8'), 'c2hvcnQ=\n');
  });

  it('gives two processes starting at once on an empty DATA_DIR the same key', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = freshDir();
      // Each process says it is ready, then waits for a go file, so both reach loadSecretBox at nearly the same
      // moment; then it seals a text with its key and prints it. Each must open what the other sealed.
      const script = `
        import { existsSync } from 'node:fs';
        const { loadSecretBox } = await import(${JSON.stringify(SECRETS_MODULE)});
        const go = process.argv[1] + '/go';
        process.stdout.write('ready\\n');
        while (!existsSync(go)) await new Promise((r) => setImmediate(r));
        const box = loadSecretBox(null, process.argv[1]);
        process.stdout.write(JSON.stringify({ sealed: box.seal('from ' + process.pid, 'race') }) + '\\n');
      `;
      const run = () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        const ready = new Promise<void>((resolve) => child.stdout.on('data', (chunk) => {
          out += chunk;
          if (out.startsWith('ready\n')) resolve();
        }));
        child.stderr.on('data', (chunk) => { err += chunk; });
        const done = new Promise<{ sealed: string }>((resolve, reject) => {
          child.on('error', reject);
          child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n')[1]!)) : reject(new Error(`exit ${code}: ${err}`))));
        });
        return { ready, done };
      };
      const both = [run(), run()];
      await Promise.all(both.map((p) => p.ready));
      writeFileSync(path.join(dir, 'go'), '');
      const [a, b] = await Promise.all(both.map((p) => p.done));
      const box = loadSecretBox(null, dir);
      assert.match(box.open(a!.sealed, 'race'), /^from \d+$/, `round ${round}: the first process used the key on disk`);
      assert.match(box.open(b!.sealed, 'race'), /^from \d+$/, `round ${round}: the second process used the same key`);
      assert.deepEqual(readdirSync(dir).sort(), ['go', 'secrets.key'], 'no draft left behind');
    }
  });
});
