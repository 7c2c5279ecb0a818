// API key wire format (SPEC 2.2, DESIGN.md section 5):
//   svc_ + 30 random base62 characters + 6-character checksum,
// the checksum being CRC-32 (IEEE) of the 30 random characters in base62, left-padded with 0.
// A key whose checksum does not match is rejected before any database lookup.
import { crc32 } from 'node:zlib';
import { BASE62, randomBase62 } from './ids.ts';

export const API_KEY_PATTERN = /^svc_[0-9A-Za-z]{36}$/;

export function checksum(random: string): string {
  let n = crc32(random);
  let out = '';
  do {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(6, '0');
}

export function generateApiKey(): { key: string; keyPrefix: string } {
  const random = randomBase62(30);
  const key = `svc_${random}${checksum(random)}`;
  return { key, keyPrefix: key.slice(0, 12) };
}

/** True when the value has the current key format and a matching checksum. */
export function isWellFormedApiKey(value: string): boolean {
  if (!API_KEY_PATTERN.test(value)) return false;
  return checksum(value.slice(4, 34)) === value.slice(34);
}
