// Standard Webhooks signing (SPEC 6.2): base64 HMAC-SHA256 over "<id>.<timestamp>.<body>",
// keyed by the secret without `whsec_`, base64-decoded. Secrets use letters and digits only,
// so base64 and base64url decode them alike (DESIGN.md section 5).
import { createHmac, randomBytes } from 'node:crypto';

export function generateWebhookSecret(): string {
  for (;;) {
    const b64 = randomBytes(24).toString('base64');
    if (/^[A-Za-z0-9]{32}$/.test(b64)) return `whsec_${b64}`;
  }
}

export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The delivery headers; during a rotation window both secrets sign. */
export function signedHeaders(secrets: string[], id: string, attempt: number, body: string, now = Date.now()): Record<string, string> {
  const ts = Math.floor(now / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': secrets.map((s) => sign(s, id, ts, body)).join(' '),
    'webhook-attempt': String(attempt),
    'user-agent': 'agent-execution-service-webhooks/1',
  };
}
