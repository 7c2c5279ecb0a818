import type { Context } from 'koa';

/**
 * The client address, trusting X-Forwarded-For only as far as TRUST_PROXY proxies append to
 * it (SPEC 8.1): with N trusted proxies, the N-th entry from the right is the client.
 */
export function clientIp(ctx: Context, trustProxy: number): string {
  const socketIp = ctx.req.socket.remoteAddress ?? 'unknown';
  if (trustProxy <= 0) return socketIp;
  const chain = (ctx.get('X-Forwarded-For') || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (chain.length === 0) return socketIp;
  return chain[Math.max(0, chain.length - trustProxy)];
}
