// Identifiers: a stable prefix (SPEC naming conventions) plus random base62.
import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Uniform random base62 string: bytes below 248 (4 x 62) map to a digit each, the rest are
 * dropped, so no digit is more likely than another; one random read for a whole id (every
 * request makes one).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length + 8)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix = 'usr' | 'spc' | 'key' | 'req' | 'sess' | 'role' | 'eu' | 'run' | 'wh' | 'evt' | 'mail' | 'pkg' | 'mdl' | 'whd' | 'sch' | 'conn' | 'cat' | 'cps' | 'oac' | 'file' | 'upl' | 'ntf' | 'mpc' | 'prx' | 'chs' | 'chm';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** Opaque secret token (sessions, reset links, bootstrap). */
export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
