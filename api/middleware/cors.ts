import cors from '@koa/cors';
import type { Context } from 'koa';

export const EXPOSED_HEADERS = ['Request-Id', 'Service-Version', 'RateLimit', 'RateLimit-Policy', 'Link', 'ETag', 'Retry-After', 'Idempotent-Replayed'];

/** CORS for TRUSTED_ORIGINS only; other origins get no CORS headers at all. */
export function corsFor(trustedOrigins: string[]) {
  const allowed = new Set(trustedOrigins);
  return cors({
    origin: (ctx: Context) => {
      const origin = ctx.get('Origin');
      return allowed.has(origin) ? origin : '';
    },
    credentials: true,
    exposeHeaders: EXPOSED_HEADERS,
    allowHeaders: [
      'Authorization',
      'Content-Type',
      'X-Org-Id',
      'X-Space-Id',
      'Service-User',
      'Service-Version',
      'Idempotency-Key',
      'If-Match',
      'If-None-Match',
      'X-View-As',
    ],
    maxAge: 600,
  });
}
