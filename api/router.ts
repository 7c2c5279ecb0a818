// Mounts route definitions on @koa/router with one fixed pipeline per request:
// authenticate -> rate limit -> tenancy and permission -> params/query -> body -> authorize -> (key) -> handler.
import Router from '@koa/router';
import type Koa from 'koa';
import type { ValidateFunction } from 'ajv';
import { ProblemError, problem } from '../shared/errors.ts';
import { StaleAccess } from './access-cache.ts';
import { assertValid, bodyAjv, paramAjv } from '../shared/validation.ts';
import { readJsonBody } from './middleware/body.ts';
import { authenticate } from './middleware/authenticate.ts';
import { idempotencyKeyFor, withIdempotency } from './middleware/idempotency.ts';
import { enforceRateLimit } from './middleware/rate-limit.ts';
import { assertStorableParams } from './middleware/storable-text.ts';
import { resolveTenancy } from './middleware/tenancy.ts';
import type { AppContext } from './context.ts';
import type { RouteDef } from './route.ts';

interface Compiled {
  params?: ValidateFunction;
  query?: ValidateFunction;
  /** The query parameters the route declares (and OpenAPI publishes). */
  queryNames: ReadonlySet<string>;
  openQuery: boolean;
  body?: ValidateFunction;
}

function compile(route: RouteDef): Compiled {
  return {
    params: route.params && paramAjv.compile(route.params),
    query: route.query && paramAjv.compile(route.query),
    queryNames: new Set(Object.keys((route.query?.properties as object | undefined) ?? {})),
    // OAuth endpoints ignore parameters they do not know (RFC 6749 3.1), and say so in their schema.
    openQuery: route.query?.additionalProperties === true,
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

/**
 * The first two segments of a path, lower-cased (templates match case-insensitively, and with or
 * without a trailing slash); undefined for a template whose first two segments are not literal.
 */
function groupKey(path: string): string | undefined {
  const segments = path.toLowerCase().split('/').filter(Boolean).slice(0, 2);
  return segments.some((s) => /[:*(?]/.test(s)) ? undefined : segments.join('/');
}

/**
 * The routes' middleware. @koa/router tests a request against every template in turn (178 of
 * them, a tenth of a run read's time in the API: issue 18), so the templates are grouped by their
 * first two segments and a request is matched against its group only, in the table's order
 * (templates without a literal prefix belong to every group). A path no group claims is still
 * matched against those, and answers 404 as before.
 */
export function buildRouter(routes: RouteDef[]): Koa.Middleware {
  const keys = new Set(routes.map((r) => groupKey(r.path)).filter((k) => k !== undefined));
  const groups = new Map([...keys].map((key) => [key, routesOf(routes.filter((r) => [key, undefined].includes(groupKey(r.path))))]));
  const rest = routesOf(routes.filter((r) => groupKey(r.path) === undefined));
  return (ctx, next) => (groups.get(groupKey(ctx.path) ?? '') ?? rest)(ctx, next);
}

function routesOf(routes: RouteDef[]): Koa.Middleware {
  const router = new Router();
  for (const route of routes) {
    const v = compile(route);
    const paramCount = (route.path.match(/\/:/g) ?? []).length;
    router[route.method](route.path, async (raw, next) => {
      const ctx = raw as unknown as AppContext;
      if (shadowed(raw as { matched?: MatchedLayer[] }, paramCount)) return next();
      // The body is read once, whichever pass uses it.
      let body: Promise<unknown> | undefined;
      const readBody = () => (body ??= readJsonBody(ctx));
      try {
        await serve(ctx, route, v, readBody, true);
      } catch (err) {
        if (!(await ranOnStaleAccess(ctx, err))) throw err;
        await serve(ctx, route, v, readBody, false);
      }
    });
  }
  return router.routes() as unknown as Koa.Middleware;
}

/**
 * Whether a failed optimistic pass ran on stale credential lookups (or failed before it could
 * tell, and the epoch has moved since): it then runs again on a fresh view, so nothing is
 * answered on stale access (api/access-cache.ts).
 */
async function ranOnStaleAccess(ctx: AppContext, err: unknown): Promise<boolean> {
  if (err instanceof StaleAccess) return true;
  const access = ctx.state.access;
  if (!access?.optimistic) return false;
  try {
    await access.settle(ctx.services.knex);
    return false;
  } catch (e) {
    if (e instanceof StaleAccess) return true;
    throw e;
  }
}

/**
 * One pass of the pipeline. `first`: the request's first pass, optimistic for a route that
 * confirms the access epoch itself; a second pass takes no second rate-limit point.
 */
async function serve(ctx: AppContext, route: RouteDef, v: Compiled, readBody: () => Promise<unknown>, first: boolean): Promise<void> {
  await authenticate(ctx, route, first && route.confirmsAccess);
  if (first && !(await rateLimited(ctx, route))) return; // before idempotency: a replay still costs a point
  await resolveTenancy(ctx, route); // permissions first, replays included
  const idempotencyKey = idempotencyKeyFor(ctx, route);
  let body: unknown;
  if (route.method !== 'get' && route.method !== 'delete' && !route.streamBody) body = await readBody();
  const input = () => {
    const params = { ...ctx.params };
    assertStorableParams(params);
    if (v.params) assertValid(v.params, params);
    const query: Record<string, unknown> = { ...ctx.query };
    if (!v.openQuery) assertDeclaredQuery(v.queryNames, query);
    assertStorableParams(query);
    if (v.query) assertValid(v.query, query);
    if (v.body) {
      if (body === undefined) body = {};
      assertValid(v.body, body);
    }
    return { body, query, params };
  };
  const handle = async () => {
    await route.handler(ctx, input());
  };
  if (route.authorize) {
    // Before the key, so a replay never answers a caller who could not make the request. An
    // invalid request is left to `handle`, whose validation failure is stored like any 4xx.
    let valid: ReturnType<typeof input> | undefined;
    try {
      valid = input();
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
    }
    if (valid) await route.authorize(ctx, valid);
  }
  if (idempotencyKey) {
    // The key is reserved before the handler runs: only on access known to be current.
    await ctx.state.access?.settle(ctx.services.knex);
    await withIdempotency(ctx, idempotencyKey, handle, route);
  } else await handle();
}

/** The first header the route requires (`headers`, `required`) that is absent or blank, as the 400 it answers. */
function missingHeader(ctx: AppContext, route: RouteDef): ProblemError | undefined {
  for (const [name, h] of Object.entries(route.headers ?? {})) {
    if (h.required && !ctx.get(name).trim()) {
      return problem('validation_failed', {
        detail: `Header ${name} is required`,
        param: name,
        errors: [{ field: name, code: 'required', message: `${name} is required` }],
      });
    }
  }
  return undefined;
}

/**
 * The route's rate limit (false: the limiter answered itself). A request missing a required
 * header still costs a point, but past the limit it is answered its 400 rather than a 429: it is
 * malformed whatever the counters say (issue 30). Within the limit the pipeline goes on as
 * before (an Idempotency-Key refused, then the handler's own 400 for the header).
 */
async function rateLimited(ctx: AppContext, route: RouteDef): Promise<boolean> {
  try {
    return await enforceRateLimit(ctx, route);
  } catch (err) {
    const missing = err instanceof ProblemError && err.code === 'rate_limited' ? missingHeader(ctx, route) : undefined;
    throw missing ?? err;
  }
}

interface MatchedLayer {
  methods: string[];
  paramNames: unknown[];
}

/**
 * The route templates that claim a path: of those matching it, the ones with the fewest
 * parameters, so `/api/api-keys/available-scopes` belongs to its literal route and not to
 * `/api/api-keys/:id` (OpenAPI lists them as separate paths with their own methods).
 */
function claiming(ctx: { matched?: MatchedLayer[] }): MatchedLayer[] {
  const routes = (ctx.matched ?? []).filter((layer) => layer.methods.length);
  const fewest = Math.min(...routes.map((layer) => layer.paramNames.length));
  return routes.filter((layer) => layer.paramNames.length === fewest);
}

/** Whether a template with more parameters than another matching one must leave this path alone. */
function shadowed(ctx: { matched?: MatchedLayer[] }, paramCount: number): boolean {
  return claiming(ctx).some((layer) => layer.paramNames.length < paramCount);
}

/**
 * 405 for a path served under other methods, including methods the router does not implement
 * (TRACE, CONNECT...), and OPTIONS: `Allow` (RFC 9110 15.5.6) lists the methods of the
 * templates that claim the path, never those of an overlapping parameterized one.
 */
export function allowedMethods() {
  return async (ctx: AppContext, next: () => Promise<unknown>) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allow = [...new Set(claiming(ctx as { matched?: MatchedLayer[] }).flatMap((layer) => layer.methods))];
    if (!allow.length) return;
    if (ctx.method === 'OPTIONS') {
      ctx.status = 200;
      ctx.body = '';
      ctx.set('Allow', allow.join(', '));
      return;
    }
    if (!allow.includes(ctx.method)) throw problem('method_not_allowed', { headers: { Allow: allow.join(', ') } });
  };
}
