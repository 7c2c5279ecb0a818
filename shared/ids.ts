// Identifiers: a stable prefix (SPEC naming conventions) plus random base62.
import { randomBytes, randomFillSync } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are read from the system 1 KB at a time and used once each, in order (as Node's
// own randomUUID does): an id costs no system call of its own, and every request makes one.
// The buffer is its own (not a slice of Node's shared pool of small buffers), refilled in place.
const POOL_BYTES = 1024;
const pool = Buffer.alloc(POOL_BYTES);
let taken = POOL_BYTES;

function randomByte(): number {
  if (taken === POOL_BYTES) {
    randomFillSync(pool);
    taken = 0;
  }
  return pool[taken++];
}

/**
 * Uniform random base62 string: bytes below 248 (4 x 62) map to a digit each, the rest are
 * dropped, so no digit is more likely than another.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

export type IdPrefix =
  | 'usr'
  | 'spc'
  | 'key'
  | 'req'
  | 'sess'
  | 'role'
  | 'eu'
  | 'run'
  | 'wh'
  | 'evt'
  | 'mail'
  | 'pkg'
  | 'mdl'
  | 'whd'
  | 'sch'
  | 'conn'
  | 'cat'
  | 'cps'
  | 'oac'
  | 'file'
  | 'upl'
  | 'ntf'
  | 'mpc'
  | 'prx'
  | 'chs'
  | 'chm';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** Opaque secret token (sessions, reset links, bootstrap). */
export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
