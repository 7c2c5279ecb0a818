// Per-route, per-identity limits (SPEC 8.1) on rate-limiter-flexible: counters in Redis when
// REDIS_URL is set (shared by replicas), in process memory otherwise.
import { RateLimiterRes } from 'rate-limiter-flexible';
import { problem } from '../../shared/errors.ts';
import { clientIp } from '../client-ip.ts';
import { rateLimitOf } from '../rate-limits.ts';
import type { AppContext } from '../context.ts';
import type { RateLimitRule } from '../rate-limiters.ts';
import type { RouteDef } from '../route.ts';
import { credentialIdentity } from './authenticate.ts';

function identity(ctx: AppContext, rule: RateLimitRule): string {
  // Run-bound routes (a remote run's sink) count per run (SPEC 8.1).
  if (rule.by === 'identity' && ctx.state.sinkRun) return `run:${ctx.state.sinkRun.id}`;
  const auth = ctx.state.auth;
  if (rule.by === 'identity' && auth) return credentialIdentity(auth);
  return `ip:${clientIp(ctx, ctx.services.config.trustProxy)}`;
}

function setHeaders(ctx: AppContext, rule: RateLimitRule, res: RateLimiterRes): number {
  const reset = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  ctx.set('RateLimit', `limit=${rule.points}, remaining=${Math.max(0, res.remainingPoints)}, reset=${reset}`);
  ctx.set('RateLimit-Policy', `${rule.points};w=${rule.duration}`);
  return reset;
}

/**
 * Consumes one point for the route; 429 `rate_limited` with Retry-After when exhausted. False
 * when it answered the request itself (an OAuth endpoint's RFC 6749 refusal).
 */
export async function enforceRateLimit(ctx: AppContext, route: RouteDef): Promise<boolean> {
  const rule = rateLimitOf(route, ctx.services.config);
  if (!rule) return true;
  if (rule.productionOnly && ctx.services.config.nodeEnv !== 'production') return true;
  const limiter = ctx.services.rateLimiters.forRoute(rule.counter ?? `${route.method.toUpperCase()} ${route.path}`, rule);
  try {
    const res = await limiter.consume(identity(ctx, rule));
    setHeaders(ctx, rule, res);
    return true;
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    const retryAfter = setHeaders(ctx, rule, err);
    const detail = `Rate limit of ${rule.points} requests per ${rule.duration} s reached for ${rule.counter ?? 'this route'}; retry in ${retryAfter} s`;
    if (rule.oauthError) {
      ctx.status = 429;
      ctx.set('Retry-After', String(retryAfter));
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'temporarily_unavailable', error_description: detail };
      return false;
    }
    throw problem('rate_limited', {
      detail,
      retryAfter,
      headers: { RateLimit: ctx.response.get('RateLimit'), 'RateLimit-Policy': ctx.response.get('RateLimit-Policy') },
    });
  }
}

/**
 * A second counter on a route, shared by a whole organization (SPEC 8.4: inline runs count per
 * identity and per organization), consumed once the organization is known. The RateLimit
 * headers stay those of the route's identity counter (SPEC 8.1: the policy is per route); a
 * refusal is 429 `rate_limited` with Retry-After and a `detail` naming `setting`.
 */
export async function enforceOrgRateLimit(ctx: AppContext, routeKey: string, points: number, setting: string): Promise<void> {
  const limiter = ctx.services.rateLimiters.forRoute(`${routeKey} per org`, { points, duration: 60, by: 'identity' });
  try {
    await limiter.consume(`org:${ctx.state.tenancy!.org!.id}`);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    throw problem('rate_limited', {
      detail: `The organization reached ${setting} (${points} requests per minute on this route, all its callers together); retry in ${retryAfter} s`,
      retryAfter,
    });
  }
}
