// Web UI passwords: their length rules, and scrypt hashes that carry their own cost.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { invalid } from '../errors.ts';

const scrypt = (password: string, salt: Buffer, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCallback(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))));

// OWASP's recommended scrypt cost (N=2^17, r=8, p=1) needs 128 MiB a hash; 2^15 keeps sign-in fast on small
// machines and is stored with each hash, so it can be raised later without invalidating existing passwords.
export const PASSWORD_HASH_N = 2 ** 15;
let cost = { N: PASSWORD_HASH_N, r: 8, p: 1 };

/**
 * For test processes alone, which sign in hundreds of times: hashes made from now on in this process cost N instead of
 * PASSWORD_HASH_N. Each hash keeps its own cost, so verifying is the same code either way. Returns the N it replaced.
 */
export function setPasswordHashCostForTests(n: number): number {
  const replaced = cost.N;
  cost = { ...cost, N: n };
  return replaced;
}
const KEY_LENGTH = 64;
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, { ...cost, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Compares in constant time. A missing hash still costs one scrypt, so an unknown e-mail is not faster. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? `scrypt$${cost.N}$${cost.r}$${cost.p}$AAAAAAAAAAAAAAAAAAAAAA==$`).split('$');
  if (scheme !== 'scrypt' || !salt || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), KEY_LENGTH, { N: Number(n), r: Number(r), p: Number(p), maxmem: 256 * 1024 * 1024 });
  return stored !== null && expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** The same rules wherever a password is chosen; `field` names it in the refusal (`password`, `newPassword`). */
export function checkPassword(password: string, field = 'password'): void {
  if (password.length < PASSWORD_MIN) throw invalid(field, `must be at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX) throw invalid(field, `must be at most ${PASSWORD_MAX} characters`);
}
