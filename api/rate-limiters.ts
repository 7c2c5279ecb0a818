// The per-route counters behind SPEC 8.1's limits, on rate-limiter-flexible: in Redis when
// REDIS_URL is set (shared by replicas), in process memory otherwise. The middleware that
// spends them is api/middleware/rate-limit.ts.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface RateLimitRule {
  /** Requests per window. */
  points: number;
  /** Window in seconds. */
  duration: number;
  /** Identity counted: client IP, or the authenticated identity (SPEC 8.1). */
  by: 'ip' | 'identity';
  /**
   * The counter's name when several routes share one (e.g. the credential proxy's methods, limited
   * together); by default each route (method and path) counts on its own.
   */
  counter?: string;
  /** Only when NODE_ENV=production (SPEC 5.4: session-library routes). */
  productionOnly?: boolean;
  /** OAuth endpoints (SPEC 5.5): a refusal is the RFC 6749 body `{error: 'temporarily_unavailable'}`, not a problem document. */
  oauthError?: boolean;
}

export class RateLimiters {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly redis?: Redis;

  constructor(redisUrl?: string) {
    // ioredis loads only with REDIS_URL (issue 18: memory of an API without it).
    if (redisUrl)
      this.redis = new (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis(redisUrl, {
        enableOfflineQueue: true,
        maxRetriesPerRequest: 2,
      });
  }

  /** One limiter per route pattern: counters are separate per endpoint. */
  forRoute(routeKey: string, rule: RateLimitRule): RateLimiterAbstract {
    let limiter = this.limiters.get(routeKey);
    if (!limiter) {
      const opts = { keyPrefix: `rl:${routeKey}`, points: rule.points, duration: rule.duration };
      limiter = this.redis ? new RateLimiterRedis({ ...opts, storeClient: this.redis }) : new RateLimiterMemory(opts);
      this.limiters.set(routeKey, limiter);
    }
    return limiter;
  }

  async close(): Promise<void> {
    await this.redis?.quit();
  }
}
