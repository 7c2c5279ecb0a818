// Preview links (DESIGN.md 7: `/preview/files/{id}?token=`): the token is `<expiry>.<mac>`, an
// HMAC-SHA256 over the file id and the expiry (unix seconds) under a key derived from
// SECRETS_KEY for this one purpose (as api/html/csrf.ts derives its keys). Nothing is stored:
// a link works until it expires, for that one file, and deleting the file ends it.
import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from '../crypto.ts';

/** How long a preview link works. */
export const PREVIEW_TTL_SECONDS = 300;

/** Only without SECRETS_KEY (never in a service, which requires it): a key for this process. */
const FALLBACK_KEY = randomBytes(32);

function mac(secretsKey: Buffer | undefined, fileId: string, expires: number): string {
  const key = createHmac('sha256', secretsKey ?? FALLBACK_KEY)
    .update('file-preview')
    .digest();
  return createHmac('sha256', key).update(`${fileId}|${expires}`).digest('base64url');
}

export function signPreviewToken(secretsKey: Buffer | undefined, fileId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${expires}.${mac(secretsKey, fileId, expires)}`;
}

/** The token's expiry when it is genuine, for this file, and not yet past; otherwise null. */
export function verifyPreviewToken(secretsKey: Buffer | undefined, fileId: string, token: string, now = Date.now()): Date | null {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  const expires = Number(m[1]);
  if (!safeEqual(mac(secretsKey, fileId, expires), m[2])) return null;
  if (expires * 1000 <= now) return null;
  return new Date(expires * 1000);
}

/** Media types shown inline, by their `type/subtype` (lower case); text is always sent as UTF-8. */
const PREVIEWABLE: Record<string, string> = {
  'image/png': 'image/png',
  'image/jpeg': 'image/jpeg',
  'image/gif': 'image/gif',
  'image/webp': 'image/webp',
  'application/pdf': 'application/pdf',
  'text/plain': 'text/plain; charset=utf-8',
};

/** The Content-Type a preview is served with, or null when the type is not previewed (SVG among them: it runs scripts). */
export function previewContentType(stored: string): string | null {
  const essence = stored.split(';')[0].trim().toLowerCase();
  return PREVIEWABLE[essence] ?? null;
}
