// Rate limits for routes SPEC 8.2 does not list, in one table. Listed routes declare their own
// limit on their definition; both show in OpenAPI as `x-rate-limit` and in RateLimit headers.
import type { RateLimitRule, RouteDef } from './route.ts';

export const DEFAULT_RATE_LIMITS: Record<'public' | 'read' | 'write', RateLimitRule> = {
  /** Unauthenticated routes (discovery, health), per client IP. */
  public: { points: 600, duration: 60, by: 'ip' },
  /** Authenticated GETs, per identity. */
  read: { points: 600, duration: 60, by: 'identity' },
  /** Authenticated POST, PUT, PATCH, DELETE, per identity. */
  write: { points: 120, duration: 60, by: 'identity' },
};

/**
 * The route's own limit, or the default of its kind. Realtime streams are long-lived
 * connections, not request traffic: they get no default (SPEC 8.1: no per-message limit).
 */
export function rateLimitOf(route: RouteDef): RateLimitRule | undefined {
  if (route.rateLimit) return route.rateLimit;
  if (route.queryCredentials) return undefined;
  if (route.auth === 'none') return DEFAULT_RATE_LIMITS.public;
  return route.method === 'get' ? DEFAULT_RATE_LIMITS.read : DEFAULT_RATE_LIMITS.write;
}
