// The credential proxy (SPEC 4.7, 8.5; DESIGN.md 7): a caller outside the service (a remote
// runner, a script) calls a third-party API with one of its connections' credentials injected,
// without ever seeing the credential. One call per request: the caller's headers and body are
// forwarded (but for its own credentials and this service's headers), the target's status,
// headers and body come back with `Proxy-Status`, and echoed credential values are redacted.
import getRawBody from 'raw-body';
import { problem } from '../../../shared/errors.ts';
import { findIntegration, type Integration, type IntegrationAuth } from '../../../shared/integrations/auths.ts';
import { type ConnectionRow, grantedUris, openCredentials, ownedConnections } from '../../../shared/integrations/connections.ts';
import { callWithCredential, DeliveryRefused } from '../../../shared/integrations/deliver.ts';
import { findLiveProxySession } from '../../../shared/integrations/proxy-sessions.ts';
import { matchesAuthorizedUri } from '../../../shared/integrations/uris.ts';
import { configuredRateLimit } from '../../rate-limits.ts';
import type { AppContext } from '../../context.ts';
import type { RateLimitRule } from '../../rate-limiters.ts';
import type { HttpMethod, RouteDef } from '../../route.ts';
import { defineRoute } from '../../route.ts';
import { connectionOwner } from '../../resources/connections.ts';

export const PROXY_PATH = '/api/credential-proxy/proxy';

export const proxyHeaders = {
  integration: 'X-Integration-Id',
  target: 'X-Target',
  session: 'X-Session-Id',
};

/**
 * Never forwarded: hop-by-hop headers, the caller's own credentials, and the headers this
 * service reads. `accept-encoding` is replaced by `identity` so that the answer can be searched
 * for echoed credentials.
 */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'accept-encoding',
  'authorization',
  'cookie',
  'x-integration-id',
  'x-target',
  'x-session-id',
  'x-org-id',
  'x-space-id',
  'x-view-as',
  'service-user',
  'service-version',
  'idempotency-key',
]);

/** Target headers not passed back: hop-by-hop, the length (recomputed), and those this service sets. */
const NOT_RETURNED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'trailer',
  'upgrade',
  'content-length',
  'request-id',
  'ratelimit',
  'ratelimit-policy',
  'retry-after-ms',
  'service-version',
  'proxy-status',
]);

/**
 * SPEC 8.5: `CREDENTIAL_PROXY_LIMITS.rate_per_min` per identity, one counter shared by every
 * method's route, so the limit holds whatever the mix of methods.
 */
function credentialProxyRateLimit(): RateLimitRule {
  return configuredRateLimit(
    { points: 100, duration: 60, by: 'identity', counter: 'the credential proxy (CREDENTIAL_PROXY_LIMITS.rate_per_min, all methods together)' },
    (c) => c.credentialProxyLimits.rate_per_min,
  );
}

const INTEGRATION_ID = /^(@[^/\s]+)\/([^/\s]+)$/;
/** What is published for X-Target; the URL parser decides, and accepts a little more. */
const TARGET_URL = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[A-Za-z0-9]+(\.[A-Za-z0-9]+)*(:[0-9]{1,4})?(\/[!-~]*)?$/;

function requiredHeader(ctx: AppContext, name: string): string {
  const value = ctx.get(name).trim();
  if (!value)
    throw problem('validation_failed', {
      detail: `Header ${name} is required`,
      param: name,
      errors: [{ field: name, code: 'required', message: `${name} is required` }],
    });
  return value;
}

function invalidHeader(name: string, message: string) {
  return problem('validation_failed', { detail: `${name} ${message}`, param: name, errors: [{ field: name, code: 'invalid', message }] });
}

/** The request body, capped by `CREDENTIAL_PROXY_LIMITS.max_request_bytes` (and `API_BODY_LIMIT_BYTES`); undefined when none. */
async function readBody(ctx: AppContext): Promise<Buffer | undefined> {
  const { config } = ctx.services;
  const limit = Math.min(config.credentialProxyLimits.max_request_bytes, config.apiBodyLimitBytes);
  const tooLarge = () => problem('payload_too_large', `The body exceeds CREDENTIAL_PROXY_LIMITS.max_request_bytes (${limit} bytes)`);
  const length = Number(ctx.get('Content-Length') || 0);
  if (length > limit) throw tooLarge();
  if (length === 0 && !ctx.get('Transfer-Encoding')) return undefined;
  try {
    const raw = await getRawBody(ctx.req, { limit });
    return raw.length ? raw : undefined;
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge();
    throw err;
  }
}

/** The caller's headers to forward (see NOT_FORWARDED, plus any the Connection header names). */
function forwardedHeaders(ctx: AppContext): Record<string, string> {
  const named = new Set(
    ctx
      .get('Connection')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name) || named.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  out['accept-encoding'] = 'identity';
  return out;
}

/** The integration `@scope/name` and the caller's usable connections of it, newest first: read at once (both need only the id). */
function readIntegration(
  ctx: AppContext,
  integrationId: string,
): { integration: Promise<Integration | undefined>; connections: Promise<ConnectionRow[]> } | undefined {
  const { knex } = ctx.services;
  const { org, space } = ctx.state.tenancy!;
  const m = INTEGRATION_ID.exec(integrationId);
  if (!m) return undefined;
  // A promise, run once (a query builder runs again each time it is awaited).
  const connections = ownedConnections(knex, { orgId: org!.id, spaceId: space!.id, owner: connectionOwner(ctx) })
    .where({ integration_package_id: integrationId, needs_reconnection: false })
    .orderBy([
      { column: 'updated_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .then((rows: ConnectionRow[]) => rows);
  return { integration: findIntegration(knex, org!.id, space!.id, m[1], m[2]), connections };
}

/**
 * Among the owner's usable connections of the matching auths, the most recently updated one
 * granted the target (DESIGN.md 5); else the newest, which delivery then refuses naming why.
 */
async function chooseConnection(
  integrationId: string,
  target: string,
  read: ReturnType<typeof readIntegration>,
): Promise<{ auth: IntegrationAuth; connection: ConnectionRow }> {
  if (!read) throw invalidHeader(proxyHeaders.integration, 'must be an integration id, @scope/name');
  const integration = await read.integration;
  if (!integration) throw problem('not_found', { detail: `No integration ${integrationId} in this space`, param: proxyHeaders.integration });
  const auths = integration.auths.filter((a) => matchesAuthorizedUri(target, a.authorizedUris));
  if (!auths.length)
    throw problem('unauthorized_target', { detail: `${target} is outside the authorized_uris of ${integrationId}`, param: proxyHeaders.target });
  const candidates = (await read.connections).filter((c) => auths.some((a) => a.key === c.auth_key));
  const connection = candidates.find((c) => matchesAuthorizedUri(target, grantedUris(c))) ?? candidates[0];
  if (!connection) {
    throw problem('proxy_connection_missing', {
      detail: `You have no usable connection of ${integrationId} for ${target} (auths ${auths.map((a) => a.key).join(', ')}); connect one first`,
      param: proxyHeaders.integration,
    });
  }
  return { auth: auths.find((a) => a.key === connection.auth_key)!, connection };
}

const REFUSALS: Record<DeliveryRefused['reason'], Parameters<typeof problem>[0]> = {
  unauthorized_target: 'unauthorized_target',
  blocked_address: 'unauthorized_target',
  request_too_large: 'payload_too_large',
  response_too_large: 'upstream_response_too_large',
  target_unreachable: 'upstream_unreachable',
  no_delivery: 'credential_not_deliverable',
  response_withheld: 'upstream_response_withheld',
};

/** One proxied call. */
export async function proxyCall(ctx: AppContext): Promise<void> {
  const { knex, config } = ctx.services;
  const integrationId = requiredHeader(ctx, proxyHeaders.integration);
  const targetHeader = requiredHeader(ctx, proxyHeaders.target);
  const sessionId = requiredHeader(ctx, proxyHeaders.session);
  let target: string;
  try {
    const url = new URL(targetHeader);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    target = url.href;
  } catch {
    throw invalidHeader(proxyHeaders.target, 'must be an absolute http(s) URL');
  }
  const { org, space } = ctx.state.tenancy!;
  // Read at once (reads only: two round trips to Postgres on the way instead of six one after the
  // other): the access epoch this request's credential lookups were made at (RouteDef.confirmsAccess),
  // the session, the integration and the caller's connections of it. Judged in this order: the
  // epoch (stale: the router runs the request again, nothing of its body read yet), the session,
  // the body, the integration, the connection.
  const confirmed = ctx.state.access!.settle(knex);
  const session = findLiveProxySession(knex, sessionId, { orgId: org!.id, spaceId: space!.id, owner: connectionOwner(ctx) });
  const integration = readIntegration(ctx, integrationId);
  // Awaited below; not unhandled when an earlier check throws.
  for (const read of [confirmed, session, integration?.integration, integration?.connections]) read?.catch(() => undefined);
  await confirmed;
  if (!(await session)) {
    throw problem('invalid_proxy_session', {
      detail: `${proxyHeaders.session} names no live credential-proxy session of yours in this space`,
      param: proxyHeaders.session,
    });
  }
  const payload = await readBody(ctx);
  const { auth, connection } = await chooseConnection(integrationId, target, integration);
  const abort = new AbortController();
  ctx.req.once('close', () => {
    if (!ctx.res.writableEnded) abort.abort();
  });
  let answer: Awaited<ReturnType<typeof callWithCredential>>;
  try {
    answer = await callWithCredential(
      config,
      config.credentialProxyLimits,
      { auth, credential: openCredentials(config.secretsKey, connection), connection },
      { method: ctx.method, url: target, headers: forwardedHeaders(ctx), body: payload },
      abort.signal,
    );
  } catch (err) {
    if (err instanceof DeliveryRefused)
      throw problem(REFUSALS[err.reason], { detail: err.message, param: err.reason === 'request_too_large' ? undefined : proxyHeaders.target });
    throw err;
  }
  ctx.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) {
    if (!NOT_RETURNED.has(name)) ctx.set(name, value);
  }
  ctx.set('Proxy-Status', `service; received-status=${answer.status}`);
  // Always a Buffer: Koa would turn a null body into 204, hiding e.g. an empty 302.
  ctx.body = answer.body;
}

const METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

/** The same proxy for every method (SPEC 4.7 shows GET; DESIGN.md 7 extends it to all). */
export function proxyRoutes(): RouteDef[] {
  const rateLimit = credentialProxyRateLimit();
  return METHODS.map((method) =>
    defineRoute({
      method,
      path: PROXY_PATH,
      operationId: `credentialProxy${method[0].toUpperCase()}${method.slice(1)}`,
      summary: `Call a third-party API with a connection's credential injected (${method.toUpperCase()})`,
      description: [
        `Forwards this ${method.toUpperCase()} to \`X-Target\` (an absolute URL) with the credential of one of your connections of ` +
          `\`X-Integration-Id\` injected per its auth's \`delivery.http\`: among your usable connections (not \`needs_reconnection\`) ` +
          `whose auth's \`authorized_uris\` match the target, the most recently updated one granted the target: a connection goes only ` +
          `where the integration version it was made (or last reconnected) under allowed, so a target a newer version added answers ` +
          `403 \`unauthorized_target\` until you reconnect. \`X-Session-Id\` must be a live \`cps_\` session of yours (the same person, ` +
          `or the same end-user of \`Service-User\`) in this space (else 403 \`invalid_proxy_session\`).`,
        'Your headers and body are forwarded except hop-by-hop headers, `Authorization`, `Cookie`, `X-Integration-Id`, `X-Target`, ' +
          '`X-Session-Id`, `X-Org-Id`, `X-Space-Id`, `X-View-As`, `Service-User`, `Service-Version` and `Idempotency-Key` (refused ' +
          'on writes, as on every route that does not honour it); `Accept-Encoding` is sent as `identity`.',
        "The answer is the target's own status, headers (`Set-Cookie` removed) and body, plus `Proxy-Status: service; received-status=<n>`; " +
          'no redirect is followed (a 3xx comes back as is); credential values the target echoes are replaced by `[redacted]`.',
        'Refusals: a target outside `authorized_uris`, or a private address not allowed by `EGRESS_ALLOW_INTERNAL_HOSTS`: 403 `unauthorized_target`; ' +
          'no usable connection: 409 `proxy_connection_missing`; body over `CREDENTIAL_PROXY_LIMITS.max_request_bytes`: 413 `payload_too_large`; ' +
          'answer over `max_response_bytes`: 502 `upstream_response_too_large`; target unreachable or silent for 30 s: 502 `upstream_unreachable`. ' +
          '`CREDENTIAL_PROXY_LIMITS.rate_per_min` per identity, all methods together.',
      ].join(' '),
      tag: 'Credential proxy',
      auth: 'any',
      context: 'space',
      scope: 'credential-proxy:call',
      rateLimit,
      confirmsAccess: true, // the access epoch is read with the session and the integration (proxyCall)
      headers: {
        [proxyHeaders.integration]: {
          description: 'The integration whose connection is used, `@scope/name`',
          required: true,
          schema: { type: 'string', pattern: INTEGRATION_ID.source },
        },
        [proxyHeaders.target]: { description: 'The absolute http(s) URL called', required: true, schema: { type: 'string', pattern: TARGET_URL.source } },
        [proxyHeaders.session]: {
          description: 'A live credential-proxy session (`cps_...`) of the caller',
          required: true,
          schema: { type: 'string', pattern: '\\S' },
        },
      },
      ...(method === 'get' || method === 'delete' ? {} : { streamBody: { contentType: '*/*', schema: { description: 'Any body, forwarded as sent' } } }),
      responses: {
        200: {
          description: "The target's answer (any status, headers and body it sent), with `Proxy-Status: service; received-status=<n>`",
          contentType: '*/*',
        },
      },
      async handler(ctx) {
        await proxyCall(ctx);
      },
    }),
  );
}
