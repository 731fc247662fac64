// Mail passwords at rest (DESIGN §7): AES-256-GCM under a 32-byte key from SECRETS_KEY, or, without it, a key made
// once into DATA_DIR/secrets.key (mode 0600) and read by every later start. Each ciphertext is bound to where it is
// stored (the workspace and the field, as additional data), so one copied into another row or field does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('a secrets key is 32 bytes');
    this.#key = key;
  }

  /** `v1:` and base64 of IV, tag and ciphertext. `context` names where the ciphertext is kept. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
  }

  /** The plaintext; throws when the ciphertext was made under another key or context, or was changed. */
  open(box: string, context: string): string {
    const [version, body] = box.split(':', 2);
    if (version !== VERSION || body === undefined) throw new Error('not a sealed secret');
    const bytes = Buffer.from(body, 'base64');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/**
 * The installation's box: SECRETS_KEY when set, else DATA_DIR/secrets.key, made on first use. Every process of one
 * installation must see the same key: several hosts share it through SECRETS_KEY.
 */
export function loadSecretBox(configured: Buffer | null, dataDir: string): SecretBox {
  if (configured) return new SecretBox(configured);
  const file = path.join(dataDir, 'secrets.key');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Written whole under another name, then linked into place: a process starting at the same moment either makes
  // the link or finds the complete file of the one that did, never a half-written one.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return new SecretBox(key);
}
