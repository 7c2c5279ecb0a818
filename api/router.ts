// Mounts route definitions on @koa/router with one fixed pipeline per request:
// authenticate -> rate limit -> tenancy and permission -> params/query -> body -> handler.
import Router from '@koa/router';
import type { ValidateFunction } from 'ajv';
import { ProblemError, problem } from '../shared/errors.ts';
import { assertValid, bodyAjv, paramAjv } from '../shared/validation.ts';
import { readJsonBody } from './middleware/body.ts';
import { authenticate } from './middleware/authenticate.ts';
import { idempotencyKeyFor, withIdempotency } from './middleware/idempotency.ts';
import { enforceRateLimit } from './middleware/rate-limit.ts';
import { resolveTenancy } from './middleware/tenancy.ts';
import type { AppContext, RouteDef } from './route.ts';

interface Compiled {
  params?: ValidateFunction;
  query?: ValidateFunction;
  /** The query parameters the route declares (and OpenAPI publishes). */
  queryNames: ReadonlySet<string>;
  body?: ValidateFunction;
}

function compile(route: RouteDef): Compiled {
  return {
    params: route.params && paramAjv.compile(route.params),
    query: route.query && paramAjv.compile(route.query),
    queryNames: new Set(Object.keys((route.query?.properties as object | undefined) ?? {})),
    body: route.body && bodyAjv.compile(route.body),
  };
}

/**
 * A query parameter the route does not declare is refused, never ignored (DESIGN 5): a client
 * that sends `?version=` to a route reading it elsewhere would otherwise get a silent default.
 */
function assertDeclaredQuery(names: ReadonlySet<string>, query: Record<string, unknown>): void {
  const unknown = Object.keys(query).filter((name) => !names.has(name));
  if (!unknown.length) return;
  const errors = unknown.map((name) => ({ field: name, code: 'unknown_field', message: `${name} is not a query parameter of this operation` }));
  throw problem('validation_failed', { detail: errors[0].message, param: unknown[0], errors });
}

export function buildRouter(routes: RouteDef[]): Router {
  const router = new Router();
  for (const route of routes) {
    const v = compile(route);
    router[route.method](route.path, async (raw) => {
      const ctx = raw as unknown as AppContext;
      await authenticate(ctx, route);
      await enforceRateLimit(ctx, route); // before idempotency: a replay still costs a point
      await resolveTenancy(ctx, route); // permissions first, replays included
      const idempotencyKey = idempotencyKeyFor(ctx, route);
      let body: unknown;
      if (route.method !== 'get' && route.method !== 'delete' && !route.streamBody) body = await readJsonBody(ctx);
      const handle = async () => {
        const params = { ...ctx.params };
        if (v.params) assertValid(v.params, params);
        const query: Record<string, unknown> = { ...ctx.query };
        assertDeclaredQuery(v.queryNames, query);
        if (v.query) assertValid(v.query, query);
        if (v.body) {
          if (body === undefined) body = {};
          assertValid(v.body, body);
        }
        await route.handler(ctx, { body, query, params });
      };
      if (idempotencyKey) await withIdempotency(ctx, idempotencyKey, handle, route.shapeReplay);
      else await handle();
    });
  }
  return router;
}

/**
 * 405 for a path served under other methods, including methods the router does not implement
 * (TRACE, CONNECT...): RFC 9110 15.5.6 requires `Allow` on every 405, so it is set here from
 * the routes matching the path rather than left to the router, which omits it on those.
 */
export function allowedMethods(router: Router) {
  const inner = router.allowedMethods({
    throw: true,
    methodNotAllowed: () => problem('method_not_allowed'),
    notImplemented: () => problem('method_not_allowed'),
  });
  return async (ctx: Parameters<typeof inner>[0], next: () => Promise<unknown>) => {
    try {
      await inner(ctx, next);
    } catch (err) {
      const matched = (ctx as { matched?: Array<{ methods: string[] }> }).matched ?? [];
      const allow = [...new Set(matched.flatMap((layer) => layer.methods))];
      if (err instanceof ProblemError && err.code === 'method_not_allowed' && allow.length) {
        throw problem('method_not_allowed', { detail: err.detail, headers: { ...err.headers, Allow: allow.join(', ') } });
      }
      throw err;
    }
  };
}
