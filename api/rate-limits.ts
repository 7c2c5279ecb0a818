// Rate limits for routes SPEC 8.2 does not list, in one table. Listed routes declare their own
// limit on their definition; both show in OpenAPI as `x-rate-limit` and in RateLimit headers.
import type { Config } from '../shared/config.ts';
import type { RateLimitRule } from './rate-limiters.ts';
import type { RouteDef } from './route.ts';

export const DEFAULT_RATE_LIMITS: Record<'public' | 'read' | 'write', RateLimitRule> = {
  /** Unauthenticated routes (discovery, health), per client IP. */
  public: { points: 600, duration: 60, by: 'ip' },
  /** Authenticated GETs, per identity. */
  read: { points: 600, duration: 60, by: 'identity' },
  /** Authenticated POST, PUT, PATCH, DELETE, per identity. */
  write: { points: 120, duration: 60, by: 'identity' },
};

// Limits SPEC 8.2 ties to a setting (`INLINE_RUN_LIMITS.rate_per_min`, `per_org_global_rate_per_min`).
// Route definitions are built at import time, before any configuration is loaded: such a route
// declares the setting's default, and this map says which setting replaces it.
const configuredPoints = new WeakMap<RateLimitRule, (config: Config) => number>();

/** A route limit whose points come from the configuration (`rule.points`: the setting's default). */
export function configuredRateLimit(rule: RateLimitRule, points: (config: Config) => number): RateLimitRule {
  configuredPoints.set(rule, points);
  return rule;
}

/**
 * The route's own limit (with the configured points where a setting decides them), or the
 * default of its kind. The limiter and the OpenAPI document both read it here. Realtime streams
 * are long-lived connections, not request traffic: they get no default (SPEC 8.1: no
 * per-message limit).
 */
export function rateLimitOf(route: RouteDef, config: Config): RateLimitRule | undefined {
  if (route.rateLimit) {
    const points = configuredPoints.get(route.rateLimit);
    return points ? { ...route.rateLimit, points: points(config) } : route.rateLimit;
  }
  if (route.queryCredentials) return undefined;
  if (route.auth === 'none') return DEFAULT_RATE_LIMITS.public;
  return route.method === 'get' ? DEFAULT_RATE_LIMITS.read : DEFAULT_RATE_LIMITS.write;
}
