// OpenAPI 3.1 built from the route definitions: the schemas published are the schemas enforced.
import { createHash } from 'node:crypto';
import { CURRENT_API_VERSION, SUPPORTED_API_VERSIONS } from '../shared/api-version.ts';
import type { Config } from '../shared/config.ts';
import { ERROR_CATALOG } from '../shared/errors.ts';
import { bodyAjv } from '../shared/validation.ts';
import { storableJsonSchema, storableSchema } from './middleware/storable-text.ts';
import { type JsonSchema, openApiPath, type RouteDef } from './route.ts';
import { rateLimitOf } from './rate-limits.ts';
import { problemSchema } from './schemas.ts';

const header = (name: string, description: string, required = false, schema: JsonSchema = { type: 'string' }) => ({
  name,
  in: 'header',
  required,
  description,
  schema,
});

/**
 * The values a path parameter cannot take because a template with fewer parameters claims the
 * path (api/router.ts, `claiming`): `GET /api/auth/device/code` is the 405 of `POST
 * /api/auth/device/code`, not `GET /api/auth/device/{uid}`. Templates that differ in that one segment only.
 */
function claimedValues(route: RouteDef, routes: RouteDef[]): Map<string, string[]> {
  const segments = route.path.split('/');
  const out = new Map<string, string[]>();
  for (const other of routes) {
    const theirs = other.path.split('/');
    if (theirs.length !== segments.length) continue;
    const differ = segments.flatMap((s, i) => (s === theirs[i] || (s.startsWith(':') && theirs[i].startsWith(':')) ? [] : [i]));
    const at = differ[0];
    if (differ.length !== 1 || !segments[at].startsWith(':') || theirs[at].startsWith(':')) continue;
    const name = segments[at].slice(1);
    out.set(name, [...new Set([...(out.get(name) ?? []), theirs[at]])]);
  }
  return out;
}

function parametersOf(route: RouteDef, routes: RouteDef[]): unknown[] {
  const out: unknown[] = [];
  const claimed = claimedValues(route, routes);
  const pathSchema = (name: string, s: JsonSchema) => {
    const values = claimed.get(name);
    return values ? { ...(storableSchema(s) as JsonSchema), not: { enum: values } } : storableSchema(s);
  };
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema?.required as string[]) ?? []);
    for (const [name, s] of Object.entries(props)) {
      out.push({ name, in: where, required: where === 'path' || required.has(name), schema: where === 'path' ? pathSchema(name, s) : storableSchema(s) });
    }
  }
  // A path parameter the route gives no schema for is still a parameter of the operation.
  const declared = new Set(Object.keys((route.params?.properties ?? {}) as object));
  for (const [, name] of route.path.matchAll(/\/:(\w+)/g)) {
    if (!declared.has(name)) out.push({ name, in: 'path', required: true, schema: pathSchema(name, { type: 'string' }) });
  }
  for (const [name, h] of Object.entries(route.headers ?? {})) out.push(header(name, h.description, h.required, h.schema));
  if (route.auth === 'session' || route.auth === 'any')
    out.push(header('Service-Version', 'API version (YYYY-MM-DD); echoed on the response', false, { type: 'string', enum: [...SUPPORTED_API_VERSIONS] }));
  if (route.idempotent)
    out.push(header('Idempotency-Key', 'At most 255 characters; a repeat replays the stored answer for 24 h', false, { type: 'string', maxLength: 255 }));
  if (route.context) {
    // Any string: what an API key (or an organization- or space-bound token) sends is ignored,
    // empty, malformed or another organization's alike (SPEC 5.2); the UUID a session must send is said in words.
    out.push(header('X-Org-Id', ORG_HEADER, false, { type: 'string' }));
  }
  if (route.context === 'space') {
    out.push(
      header('X-Space-Id', 'Space (sessions); an API key is pinned to its own space (another is 403)', false, {
        type: 'string',
        pattern: '^spc_[0-9A-Za-z]{24}$',
      }),
    );
    if (route.auth === 'any')
      out.push(
        header('Service-User', "Act for this end-user (`eu_...`); API keys only; an id of no end-user of the key's space is 403", false, {
          type: 'string',
          pattern: '^eu_',
        }),
      );
  }
  return out;
}

const ORG_HEADER =
  'The organization, by its id (a UUID), with a session or an instance-level access token: anything else is 400 `validation_failed`, ' +
  'and an organization the caller is not a member of 403. ' +
  'Ignored with an API key or an organization- or space-level token, bound to their organization, whatever it holds (SPEC 5.2).';

/**
 * One frame of an event stream, as OpenAPI 3.1 describes an item of `text/event-stream`: its
 * `event` name, its `id` and its `data`, a JSON document of the shape that event carries.
 */
function sseFrameSchema(frames: NonNullable<RouteDef['sseFrames']>): JsonSchema {
  return {
    oneOf: Object.entries(frames).map(([event, frame]) => ({
      type: 'object',
      description: frame.description,
      required: ['event', 'data'],
      properties: {
        event: { const: event },
        id: { type: 'string', description: '`<subscriber>:<n>`, unique per connection' },
        data: { type: 'string', contentMediaType: 'application/json', contentSchema: frame.schema },
      },
    })),
  };
}

/**
 * A body the handler reads itself. The JSON ones this service reads (MCP, the LLM proxy) refuse
 * unstorable text as the router's do; the authorization server's (tag OIDC) are oidc-provider's own.
 */
function streamBodySchema(route: RouteDef, body: NonNullable<RouteDef['streamBody']>): unknown {
  return body.contentType === 'application/json' && route.tag !== 'OIDC' ? storableSchema(body.schema) : body.schema;
}

function responsesOf(route: RouteDef, config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const problemContent = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  for (const [status, r] of Object.entries(route.responses)) {
    const headers = r.headers ? { headers: r.headers } : {};
    const schema = r.contentType === 'text/event-stream' && route.sseFrames ? sseFrameSchema(route.sseFrames) : r.schema;
    // The router's own refusals (validation, text that cannot be stored) come before any handler,
    // as problem documents, whatever else an error status of the route is answered with.
    const problemToo = r.problem || Number(status) >= 400;
    out[status] = schema
      ? { description: r.description, ...headers, content: { [r.contentType ?? 'application/json']: { schema }, ...(problemToo ? problemContent : {}) } }
      : { description: r.description, ...headers };
  }
  const problemRef = { content: problemContent };
  out.default = { description: 'Error (RFC 9457 problem document)', ...problemRef };
  const limit = rateLimitOf(route, config);
  if (limit) {
    out['429'] = {
      description:
        `Rate limited: ${limit.points} per ${limit.duration} s per ${limit.by === 'ip' ? 'client IP' : 'identity'}` +
        `${limit.counter ? `, counted with ${limit.counter}` : ''}${limit.productionOnly ? ' (NODE_ENV=production)' : ''}`,
      headers: { 'Retry-After': { schema: { type: 'integer' } }, RateLimit: { schema: { type: 'string' } } },
      ...problemRef,
    };
  }
  return out;
}

export function buildOpenApi(routes: RouteDef[], config: Config): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const p = openApiPath(route.path);
    paths[p] ??= {};
    paths[p][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      description: route.description,
      tags: [route.tag],
      security:
        route.auth === 'none'
          ? []
          : route.auth === 'session'
            ? [{ session: [] }]
            : route.auth === 'sink'
              ? [{ sinkSecret: [] }]
              : [{ apiKey: [] }, ...(route.queryCredentials ? [{ apiKeyQuery: [] }] : []), { session: [] }],
      parameters: parametersOf(route, routes),
      // The router reads a missing body as `{}`: the body is required only where `{}` is refused.
      ...(route.body
        ? { requestBody: { required: !bodyAjv.validate(route.body, {}), content: { 'application/json': { schema: storableSchema(route.body) } } } }
        : {}),
      ...(route.streamBody
        ? { requestBody: { required: true, content: { [route.streamBody.contentType]: { schema: streamBodySchema(route, route.streamBody) } } } }
        : {}),
      responses: responsesOf(route, config),
      ...(route.scope ? { 'x-required-scope': route.scope } : {}),
      ...(rateLimitOf(route, config) ? { 'x-rate-limit': rateLimitOf(route, config) } : {}),
      ...(route.sseFrames ? { 'x-sse-frames': route.sseFrames } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Execution Service API',
      version: CURRENT_API_VERSION,
      description: 'Runs AI agents in isolated sandboxes on Temporal. Errors are RFC 9457 problem documents; see x-error-codes.',
    },
    servers: [{ url: config.publicUrl }],
    paths,
    components: {
      schemas: { Problem: problemSchema, StorableJson: storableJsonSchema },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key: svc_ + 30 base62 + 6-character checksum' },
        session: { type: 'apiKey', in: 'cookie', name: 'svc.session_token' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'token', description: 'API key in the query, on Server-Sent Events routes only' },
        sinkSecret: {
          type: 'http',
          scheme: 'bearer',
          description: "The per-run secret (`sink_` + 40 base62) returned once by POST /api/runs/remote; it opens that run's sink routes only",
        },
      },
    },
    'x-error-codes': Object.fromEntries(Object.entries(ERROR_CATALOG).map(([code, e]) => [code, { status: e.status, title: e.title }])),
  };
}

export function strongEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url')}"`;
}
