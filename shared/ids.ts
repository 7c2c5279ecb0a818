// Identifiers: a stable prefix (SPEC naming conventions) plus random base62.
import { randomBytes, randomInt } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 string (rejection-free: randomInt is unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
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
