// A route is one file exporting `defineRoute({...})`. The same definition drives request
// validation, authentication, authorization, rate limiting and the OpenAPI document, so the
// published schemas are exactly the ones enforced.
import type { Scope } from '../shared/permissions.ts';
import type { ModuleName } from '../shared/modules.ts';
import type { JsonSchema } from '../shared/json-schema.ts';
import type { AppContext } from './context.ts';
import type { RateLimitRule } from './rate-limiters.ts';

export type { JsonSchema };
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseDef {
  description: string;
  schema?: JsonSchema;
  contentType?: string;
  /** Response headers, published in OpenAPI. */
  headers?: Record<string, { description: string; schema: JsonSchema }>;
  /** Also answered as a problem document, to a client that does not ask for `contentType`. */
  problem?: boolean;
}

export interface RouteInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
}

export interface RouteDef<B = any, Q = any, P = any> {
  method: HttpMethod;
  /** Koa path, e.g. `/api/orgs/:orgId/members`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /**
   * Credentials accepted: `none` (public), `session` (dashboard only), `any` (API key or session),
   * `sink` (the per-run secret of a remote run's sink, for the run named by the `:id` parameter).
   */
  auth: 'none' | 'session' | 'any' | 'sink';
  /** Tenancy context: `org` needs X-Org-Id, `space` needs X-Org-Id and X-Space-Id (SPEC 5.2). */
  context?: 'org' | 'space';
  /** Permission required in that context. */
  scope?: Scope;
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  /** Headers the handler reads and checks itself, published as header parameters. */
  headers?: Record<string, { description: string; required?: boolean; schema: JsonSchema }>;
  /** The handler reads the request body itself (e.g. a multipart upload); published as given. */
  streamBody?: { contentType: string; schema: JsonSchema };
  responses: Record<number, ResponseDef>;
  rateLimit?: RateLimitRule;
  /**
   * The handler checks the access epoch itself, in or alongside its first query and before any
   * side effect (`AccessView.confirm` / `settle`, api/access-cache.ts): the request then starts on
   * the credential lookups kept in memory without a query of its own (hot routes: a run read, a launch).
   */
  confirmsAccess?: boolean;
  /**
   * Authorization that depends on the request itself (a body field, a header the route reads),
   * which `scope` cannot express: run after validation, before the handler and before the key,
   * so a replay meets it too (SPEC 8.8.5). Throw the problem the caller gets.
   */
  authorize?: (ctx: AppContext, input: RouteInput<B, Q, P>) => Promise<void> | void;
  /** Honours Idempotency-Key (SPEC 8.8); every other write refuses it. */
  idempotent?: boolean;
  /**
   * Re-shapes a replayed 2xx body for the caller replaying it (SPEC 8.8.5), e.g. a run as the
   * current caller may see it now. Throwing a problem answers that instead.
   */
  shapeReplay?: (ctx: AppContext, storedBody: string) => Promise<string>;
  /**
   * Fields of the 2xx body shown once (a secret, as dotted paths: `secret`, `sink.secret`): a
   * replay carries them only to the identity that made the request (SPEC 8.8.5).
   */
  shownOnce?: readonly string[];
  /**
   * Server-Sent Events routes (SPEC 4.5, 5.3): the API key may also come as query `token`, and a
   * session's organization and space as query `orgId` / `spaceId` (EventSource cannot send
   * headers). No other route reads these parameters.
   */
  queryCredentials?: boolean;
  /** Event stream frames, by event name, published as `x-sse-frames` (each data a JSON Schema). */
  sseFrames?: Record<string, { description: string; schema: JsonSchema }>;
  /** The optional module the route belongs to (`moduleRoutes`): absent from the app when `MODULES` leaves it out. */
  module?: ModuleName;
  handler(ctx: AppContext, input: RouteInput<B, Q, P>): Promise<void> | void;
}

export function defineRoute<B = any, Q = any, P = any>(def: RouteDef<B, Q, P>): RouteDef<B, Q, P> {
  return def;
}

/** Marks an optional module's routes (shared/modules.ts), declared once in its routes folder. */
export function moduleRoutes(module: ModuleName, routes: RouteDef[]): RouteDef[] {
  return routes.map((r) => ({ ...r, module }));
}

/** Koa `:param` path to OpenAPI `{param}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}
