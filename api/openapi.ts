// OpenAPI 3.1 built from the route definitions: the schemas published are the schemas enforced.
import { createHash } from 'node:crypto';
import { CURRENT_API_VERSION, SUPPORTED_API_VERSIONS } from '../shared/api-version.ts';
import type { Config } from '../shared/config.ts';
import { ERROR_CATALOG } from '../shared/errors.ts';
import { bodyAjv } from '../shared/validation.ts';
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

function parametersOf(route: RouteDef): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema?.required as string[]) ?? []);
    for (const [name, s] of Object.entries(props)) {
      out.push({ name, in: where, required: where === 'path' || required.has(name), schema: s });
    }
  }
  // A path parameter the route gives no schema for is still a parameter of the operation.
  const declared = new Set(Object.keys((route.params?.properties ?? {}) as object));
  for (const [, name] of route.path.matchAll(/\/:(\w+)/g)) {
    if (!declared.has(name)) out.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  for (const [name, h] of Object.entries(route.headers ?? {})) out.push(header(name, h.description, h.required, h.schema));
  if (route.auth === 'session' || route.auth === 'any') out.push(header('Service-Version', 'API version (YYYY-MM-DD); echoed on the response', false, { type: 'string', enum: [...SUPPORTED_API_VERSIONS] }));
  if (route.idempotent) out.push(header('Idempotency-Key', 'At most 255 characters; a repeat replays the stored answer for 24 h', false, { type: 'string', maxLength: 255 }));
  if (route.context) {
    out.push(header('X-Org-Id', 'Organization (sessions); ignored with an API key, whatever it holds (SPEC 5.2)', false, { type: 'string', format: 'uuid' }));
  }
  if (route.context === 'space') {
    out.push(header('X-Space-Id', 'Space (sessions); an API key is pinned to its own space (another is 403)', false, { type: 'string', pattern: '^spc_[0-9A-Za-z]{24}$' }));
    if (route.auth === 'any') out.push(header('Service-User', 'Act for this end-user (`eu_...`); API keys only; an id of no end-user of the key\'s space is 403', false, { type: 'string', pattern: '^eu_' }));
  }
  return out;
}

function responsesOf(route: RouteDef, config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const problemContent = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  for (const [status, r] of Object.entries(route.responses)) {
    const headers = r.headers ? { headers: r.headers } : {};
    out[status] = r.schema
      ? { description: r.description, ...headers, content: { [r.contentType ?? 'application/json']: { schema: r.schema }, ...(r.problem ? problemContent : {}) } }
      : { description: r.description, ...headers };
  }
  const problemRef = { content: problemContent };
  out.default = { description: 'Error (RFC 9457 problem document)', ...problemRef };
  const limit = rateLimitOf(route, config);
  if (limit) {
    out['429'] = {
      description: `Rate limited: ${limit.points} per ${limit.duration} s per ${limit.by === 'ip' ? 'client IP' : 'identity'}${limit.productionOnly ? ' (NODE_ENV=production)' : ''}`,
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
      parameters: parametersOf(route),
      // The router reads a missing body as `{}`: the body is required only where `{}` is refused.
      ...(route.body ? { requestBody: { required: !bodyAjv.validate(route.body, {}), content: { 'application/json': { schema: route.body } } } } : {}),
      ...(route.streamBody ? { requestBody: { required: true, content: { [route.streamBody.contentType]: { schema: route.streamBody.schema } } } } : {}),
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
      schemas: { Problem: problemSchema },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key: svc_ + 30 base62 + 6-character checksum' },
        session: { type: 'apiKey', in: 'cookie', name: 'svc.session_token' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'token', description: 'API key in the query, on Server-Sent Events routes only' },
        sinkSecret: {
          type: 'http',
          scheme: 'bearer',
          description: 'The per-run secret (`sink_` + 40 base62) returned once by POST /api/runs/remote; it opens that run\'s sink routes only',
        },
      },
    },
    'x-error-codes': Object.fromEntries(Object.entries(ERROR_CATALOG).map(([code, e]) => [code, { status: e.status, title: e.title }])),
  };
}

export function strongEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url')}"`;
}
