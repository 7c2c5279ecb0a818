// Secrets at rest (DESIGN.md section 4): AES-256-GCM under SECRETS_KEY, stored as
// "v1.<iv>.<tag>.<ciphertext>" in base64url.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export class SecretsUnavailableError extends Error {
  override name = 'SecretsUnavailableError';
}

function requireKey(key: Buffer | undefined): Buffer {
  if (!key) throw new SecretsUnavailableError('SECRETS_KEY is not configured: secrets cannot be stored or read');
  return key;
}

export function encryptSecret(key: Buffer | undefined, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', requireKey(key), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

export function decryptSecret(key: Buffer | undefined, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1') throw new Error('unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', requireKey(key), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
