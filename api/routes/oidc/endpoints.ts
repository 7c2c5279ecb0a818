// The authorization server's endpoints (SPEC 4.2): each is a route of the table (published in
// OpenAPI, rate limited per IP where SPEC 5.5 says so) whose handler hands the request to
// oidc-provider, which answers it in full (OAuth errors as RFC 6749 JSON, pages as HTML).
import { problem } from '../../../shared/errors.ts';
import type { Knex } from 'knex';
import { accountClaims } from '../../../shared/oidc/accounts.ts';
import { verifyAccessToken } from '../../../shared/oidc/tokens.ts';
import { readForm } from '../../html/form.ts';
import type { AppContext } from '../../context.ts';
import type { RateLimitRule } from '../../rate-limiters.ts';
import { defineRoute, type HttpMethod, type JsonSchema, type RouteDef } from '../../route.ts';
import { prefillUserCode } from './pages.ts';
import { ROUTES } from './_paths.ts';
import { oidcServer, REGISTERED_REDIRECT_URI, SESSION_COOKIE } from './provider.ts';
import { NUL_FREE } from '../../middleware/storable-text.ts';

/** SPEC 5.5: authorize, token, introspect, revoke and registration, per client IP. */
const OAUTH_LIMIT: RateLimitRule = { points: 60, duration: 60, by: 'ip', oauthError: true };

const json = (description: string) => ({ description, contentType: 'application/json', schema: { type: 'object' } });
const html = (description: string) => ({ description, contentType: 'text/html', schema: { type: 'string' } });
const form = (properties: Record<string, JsonSchema>, required: string[] = []) => ({
  contentType: 'application/x-www-form-urlencoded',
  schema: { type: 'object', properties, required, additionalProperties: { type: 'string' } },
});
/** Parameters the endpoint reads; others are ignored, as OAuth requires. */
const params = (properties: Record<string, JsonSchema>) => ({ type: 'object', properties, additionalProperties: true });
const str = (description: string): JsonSchema => ({ type: 'string', description });

/** Headers our pipeline set that every answer carries (SPEC 8.1, request ids). */
const KEPT_HEADERS = ['request-id', 'ratelimit', 'ratelimit-policy', 'retry-after'];

async function delegate(ctx: AppContext): Promise<void> {
  const server = await oidcServer(ctx.services);
  ctx.respond = false; // oidc-provider writes the response itself
  // Koa's error handling inside the provider clears every header before answering an error: the
  // ones set here are put back when the head is written.
  const res = ctx.res;
  const kept = KEPT_HEADERS.flatMap((name) => (res.hasHeader(name) ? [[name, res.getHeader(name)!] as const] : []));
  const writeHead = res.writeHead;
  res.writeHead = ((...args: Parameters<typeof writeHead>) => {
    for (const [name, value] of kept) if (!res.hasHeader(name)) res.setHeader(name, value);
    return writeHead.apply(res, args);
  }) as typeof writeHead;
  await server.handle(ctx.req, res);
}

/**
 * A device form posted (or resumed) by a browser that holds no authorization-server session
 * cannot be valid (its `xsrf` lives in that session; oidc-provider would fail saving a session
 * it never stored): the browser is sent to a fresh code entry page, the code it posted kept.
 */
async function withoutSessionRestart(ctx: AppContext): Promise<boolean> {
  if (ctx.cookies.get(SESSION_COOKIE)) return false;
  const code = ctx.method === 'POST' ? (await readForm(ctx)).get('user_code') : null;
  ctx.status = 303;
  ctx.redirect(code ? `${ROUTES.code_verification}?${new URLSearchParams({ user_code: code.slice(0, 64) })}` : ROUTES.code_verification);
  return true;
}

/**
 * OAuth 2.1 lets a client POST the authorization (or sign-out) request as a form: the provider
 * gets it as the equivalent GET (its own POST support needs SameSite=None session cookies, which
 * a plain-http PUBLIC_URL cannot set).
 */
async function formAsQuery(ctx: AppContext): Promise<boolean> {
  const form = await readForm(ctx);
  ctx.req.method = 'GET';
  ctx.req.url = `${ctx.path}?${form.toString()}`;
  return false;
}

/**
 * UserInfo for the API's access tokens. oidc-provider serves UserInfo only for tokens without
 * an audience, and every token it issues here is an ES256 JWT for the API: such a token is
 * answered here, with the claims its scope grants (`openid`, then `profile`, `email`). Anything
 * else (no bearer header, an opaque token) is left to the provider.
 */
async function userinfoOfApiToken(ctx: AppContext): Promise<boolean> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1] ?? '';
  if (bearer.split('.').length !== 3) return false;
  const knex = ctx.services.knex as Knex;
  ctx.set('Cache-Control', 'no-store');
  const refuse = (status: number, error: string, description: string) => {
    ctx.status = status;
    ctx.set('WWW-Authenticate', `Bearer error="${error}", error_description="${description}"`);
    ctx.body = { error, error_description: description };
    return true;
  };
  const claims = await verifyAccessToken(knex, ctx.services.config, bearer);
  if (!claims) return refuse(401, 'invalid_token', 'invalid token provided');
  const scopes = new Set((claims.scope ?? '').split(' '));
  if (!scopes.has('openid')) return refuse(403, 'insufficient_scope', 'access token missing openid scope');
  const account = await accountClaims(knex, claims.sub);
  if (!account) return refuse(401, 'invalid_token', 'the account of this token no longer exists');
  ctx.body = {
    sub: claims.sub,
    ...(scopes.has('profile') ? { name: account.name } : {}),
    ...(scopes.has('email') && account.email ? { email: account.email, email_verified: account.email_verified } : {}),
  };
  return true;
}

/**
 * A browser without a sign-in at the authorization server, and no client asking to be sent back,
 * has nothing to sign out of: it goes to the signed-out page (oidc-provider would answer with a
 * page that submits itself by script).
 */
function nothingToSignOut(ctx: AppContext): boolean {
  const url = new URL(ctx.req.url ?? '/', 'http://x');
  if (ctx.cookies.get(SESSION_COOKIE) || url.searchParams.has('post_logout_redirect_uri')) return false;
  ctx.status = 303;
  ctx.redirect(`${ROUTES.end_session}/success`);
  return true;
}

interface Endpoint {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  description: string;
  rateLimit?: RateLimitRule;
  query?: JsonSchema;
  streamBody?: RouteDef['streamBody'];
  responses: RouteDef['responses'];
  /** Serve the request as if it had come for this path (the RFC 8414 alias of discovery). */
  as?: string;
  /** Adjusts the request before the provider sees it; true when it answered the request itself. */
  before?: (ctx: AppContext) => boolean | undefined | Promise<boolean>;
}

function endpoint(e: Endpoint): RouteDef {
  return defineRoute({
    method: e.method,
    path: e.path,
    operationId: e.operationId,
    summary: e.summary,
    description: e.description,
    tag: 'OIDC',
    auth: 'none',
    rateLimit: e.rateLimit,
    query: e.query ?? params({}),
    streamBody: e.streamBody,
    responses: e.responses,
    async handler(ctx) {
      if (e.as) ctx.req.url = e.as + (ctx.querystring ? `?${ctx.querystring}` : '');
      if (await e.before?.(ctx)) return;
      await delegate(ctx);
    },
  });
}

const authorizeParams = params({
  response_type: str('`code`'),
  client_id: str('The client'),
  redirect_uri: str("One of the client's redirect URIs"),
  scope: str('Space-separated: `openid`, `offline_access`, `email`, `profile` and the permissions asked for (e.g. `runs:read agents:run`)'),
  state: str('Echoed back to the client'),
  code_challenge: str('PKCE S256 challenge (required)'),
  code_challenge_method: str('`S256`'),
  nonce: str('Echoed in the ID token'),
  prompt: str('`login`, `consent`, `none`'),
});

export const oidcEndpoints: RouteDef[] = [
  endpoint({
    method: 'get',
    path: '/.well-known/openid-configuration',
    operationId: 'openidConfiguration',
    summary: 'OpenID Connect discovery',
    description:
      'The authorization server metadata: issuer (`PUBLIC_URL`), endpoints, supported grants (authorization code with PKCE S256, ' +
      'refresh token, device code), scopes, ES256 signing.',
    responses: { 200: json('OpenID Provider metadata') },
  }),
  endpoint({
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    operationId: 'oauthAuthorizationServerMetadata',
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
    description: 'The same document as `/.well-known/openid-configuration`.',
    responses: { 200: json('Authorization server metadata') },
    as: '/.well-known/openid-configuration',
  }),
  ...(['get', 'post'] as const).map((method) =>
    endpoint({
      method,
      path: ROUTES.authorization,
      operationId: method === 'get' ? 'oauthAuthorize' : 'oauthAuthorizePost',
      summary: 'Authorization endpoint (authorization code with PKCE)',
      description:
        'Starts a sign-in: redirects the browser to the sign-in page, then the consent page, then back to `redirect_uri` with `code` ' +
        'and `state`. PKCE (S256) is required. Rate limited per IP (429 with an RFC 6749 body).',
      rateLimit: OAUTH_LIMIT,
      query: authorizeParams,
      ...(method === 'post' ? { streamBody: form({}), before: formAsQuery } : {}),
      responses: {
        303: { description: 'To the sign-in or consent page, or back to the client' },
        400: html('The request cannot be served (unknown client, bad redirect URI)'),
        429: json('RFC 6749 `temporarily_unavailable`'),
      },
    }),
  ),
  endpoint({
    method: 'get',
    path: `${ROUTES.authorization}/:uid`,
    operationId: 'oauthAuthorizeResume',
    summary: 'Authorization endpoint, resumed after the sign-in or consent page',
    description: 'Followed by the browser after a page of the flow; not called directly.',
    responses: { 303: { description: 'The next page, or back to the client' }, 400: html('The authorization expired or was started in another browser') },
  }),
  endpoint({
    method: 'post',
    path: ROUTES.token,
    operationId: 'oauthToken',
    summary: 'Token endpoint',
    description:
      'Grants `authorization_code` (with `code_verifier`), `refresh_token` (rotated) and `urn:ietf:params:oauth:grant-type:device_code`. ' +
      'Confidential clients authenticate with HTTP Basic. Access tokens are ES256 JWTs for the API, valid one hour. Rate limited ' +
      'per IP.',
    rateLimit: OAUTH_LIMIT,
    streamBody: form(
      {
        grant_type: str('The grant'),
        code: str('Authorization code'),
        code_verifier: str('PKCE verifier'),
        redirect_uri: str('As sent to authorize'),
        refresh_token: str('Refresh token'),
        device_code: str('Device code'),
        client_id: str('Public clients'),
      },
      ['grant_type'],
    ),
    responses: {
      200: json('`{access_token, token_type, expires_in, refresh_token?, id_token?, scope}`'),
      400: json('RFC 6749 error'),
      401: json('`invalid_client`'),
      429: json('RFC 6749 `temporarily_unavailable`'),
    },
  }),
  ...(['get', 'post'] as const).map((method) =>
    endpoint({
      method,
      path: ROUTES.userinfo,
      operationId: method === 'get' ? 'oauthUserinfo' : 'oauthUserinfoPost',
      summary: 'UserInfo endpoint',
      description: "The signed-in person's claims (`sub`, and `name`, `email` when granted) for an access token carrying `openid`.",
      before: userinfoOfApiToken,
      ...(method === 'post' ? { streamBody: form({}) } : {}),
      responses: { 200: json('Claims'), 401: json('`invalid_token`'), 403: json('`insufficient_scope`: the token lacks `openid`') },
    }),
  ),
  endpoint({
    method: 'post',
    path: ROUTES.introspection,
    operationId: 'oauthIntrospect',
    summary: 'Token introspection (RFC 7662)',
    description: 'For the client that holds the token (client authentication required). Rate limited per IP.',
    rateLimit: OAUTH_LIMIT,
    streamBody: form({ token: str('The token'), token_type_hint: str('`access_token` or `refresh_token`') }, ['token']),
    responses: { 200: json('`{active, ...}`'), 400: json('RFC 6749 error'), 401: json('`invalid_client`'), 429: json('RFC 6749 `temporarily_unavailable`') },
  }),
  endpoint({
    method: 'post',
    path: ROUTES.revocation,
    operationId: 'oauthRevoke',
    summary: 'Token revocation (RFC 7009)',
    description: "Revokes a refresh token (and its grant's tokens). Access tokens are JWTs: they live until they expire. Rate limited per IP.",
    rateLimit: OAUTH_LIMIT,
    streamBody: form({ token: str('The token'), token_type_hint: str('`access_token` or `refresh_token`') }, ['token']),
    responses: {
      200: { description: 'Revoked (or unknown)' },
      400: json('RFC 6749 error'),
      401: json('`invalid_client`'),
      429: json('RFC 6749 `temporarily_unavailable`'),
    },
  }),
  endpoint({
    method: 'post',
    path: ROUTES.registration,
    operationId: 'oauthRegister',
    summary: 'Dynamic client registration (RFC 7591)',
    description:
      'Needs no session. The client is instance level: its tokens act as the person who signs in, with at most what that person holds. Rate limited per IP.',
    rateLimit: OAUTH_LIMIT,
    // The redirect URIs registration takes and the client name it stores (provider.ts,
    // `storableAdapter`); other metadata oidc-provider ignores or checks itself.
    streamBody: {
      contentType: 'application/json',
      schema: {
        type: 'object',
        required: ['redirect_uris'],
        properties: {
          redirect_uris: { type: 'array', minItems: 1, items: { type: 'string', pattern: REGISTERED_REDIRECT_URI } },
          client_name: { type: 'string', minLength: 1, pattern: NUL_FREE },
        },
      },
    },
    responses: {
      201: json('The client with `client_id` (and `client_secret` unless public)'),
      400: json('`invalid_client_metadata` / `invalid_redirect_uri`'),
      429: json('RFC 6749 `temporarily_unavailable`'),
    },
  }),
  endpoint({
    method: 'get',
    path: ROUTES.jwks,
    operationId: 'oauthJwks',
    summary: 'Signing keys (JWKS)',
    description: 'The ES256 public keys that verify access and ID tokens; a retired key stays here until its tokens expire.',
    responses: { 200: { description: '`{keys: [...]}`', contentType: 'application/jwk-set+json', schema: { type: 'object' } } },
  }),
  endpoint({
    method: 'post',
    path: ROUTES.device_authorization,
    operationId: 'oauthDeviceCode',
    summary: 'Device authorization (RFC 8628)',
    description:
      'For CLIs: answers `device_code`, `user_code` and `verification_uri` (`/api/auth/device`); the person opens it, enters the ' +
      'code and signs in while the CLI polls the token endpoint with the device code grant.',
    rateLimit: OAUTH_LIMIT,
    streamBody: form({ client_id: str('The client'), scope: str('As for authorize') }, ['client_id']),
    responses: { 200: json('`{device_code, user_code, verification_uri, verification_uri_complete, expires_in, interval}`'), 400: json('RFC 6749 error') },
  }),
  ...(['get', 'post'] as const).map((method) =>
    endpoint({
      method,
      path: ROUTES.code_verification,
      operationId: method === 'get' ? 'deviceVerification' : 'deviceVerificationSubmit',
      summary: method === 'get' ? 'Device verification page' : 'Device verification: submit the code',
      description: 'The page a person opens to connect a device: enter the code, confirm, sign in and consent.',
      query: params({ user_code: str('Prefills the code (from `verification_uri_complete`)') }),
      // oidc-provider would answer `?user_code=` with a page that submits itself by script; ours
      // shows the code in the form instead, and the person presses Continue.
      ...(method === 'get' ? { before: prefillUserCode } : {}),
      ...(method === 'post' ? { streamBody: form({ user_code: str('The code'), xsrf: str("The form's CSRF value") }), before: withoutSessionRestart } : {}),
      responses: {
        200: html('The page'),
        303: { description: 'A form from a browser without a sign-in session there: to a fresh code entry page' },
        400: html('The code is wrong or expired'),
      },
    }),
  ),
  endpoint({
    method: 'get',
    path: `${ROUTES.code_verification}/:uid`,
    operationId: 'deviceVerificationResume',
    summary: 'Device verification, resumed after sign-in and consent',
    description: 'Followed by the browser; not called directly.',
    before: withoutSessionRestart,
    responses: { 200: html('The success page'), 303: { description: 'A browser without a sign-in session there: to the code entry page' } },
  }),
  ...(['get', 'post'] as const).map((method) =>
    endpoint({
      method,
      path: ROUTES.end_session,
      operationId: method === 'get' ? 'oauthEndSession' : 'oauthEndSessionPost',
      summary: 'Sign out (RP-initiated logout)',
      description: 'Asks the person to confirm, then ends their sign-in at the authorization server.',
      ...(method === 'post'
        ? { streamBody: form({}), before: async (ctx: AppContext) => (await formAsQuery(ctx)) || nothingToSignOut(ctx) }
        : { before: nothingToSignOut }),
      responses: { 200: html('The confirmation page'), 303: { description: 'No sign-in here to end: to the signed-out page' } },
    }),
  ),
  ...['confirm', 'success'].map((step) =>
    endpoint({
      method: step === 'confirm' ? 'post' : 'get',
      path: `${ROUTES.end_session}/${step}`,
      operationId: `oauthEndSession${step === 'confirm' ? 'Confirm' : 'Success'}`,
      summary: step === 'confirm' ? 'Sign out: confirmed' : 'Sign out: done',
      description: 'Part of the sign-out pages.',
      ...(step === 'confirm' ? { streamBody: form({ xsrf: str('CSRF value'), logout: str('`yes` to sign out') }) } : {}),
      responses: { 200: html('A page'), 303: { description: 'Onwards' }, 400: json('RFC 6749 error: the sign-out form expired') },
    }),
  ),
];

/**
 * The client-management endpoints of session libraries (SPEC 4.2): they exist under these names
 * elsewhere, and here answer 401 to everyone, sessions included. Clients are managed with
 * `/api/oauth/clients`.
 */
export const refusedClientEndpoints: RouteDef[] = [
  ['post', 'create-client'],
  ['get', 'get-client'],
  ['get', 'get-clients'],
  ['post', 'update-client'],
  ['post', 'delete-client'],
  ['post', 'client/rotate-secret'],
].map(([method, name]) =>
  defineRoute({
    method: method as HttpMethod,
    path: `/api/auth/oauth2/${name}`,
    operationId: `refused_${name.replace(/[/-]/g, '_')}`,
    summary: `Not served: ${name}`,
    description: 'Answers 401 to every caller, sessions included: manage OAuth clients with `/api/oauth/clients`.',
    tag: 'OIDC',
    auth: 'none',
    query: params({}),
    streamBody: method === 'post' ? { contentType: 'application/json', schema: { type: 'object' } } : undefined,
    responses: { 401: { description: 'Always' } },
    handler() {
      throw problem('unauthorized', 'OAuth clients are managed with /api/oauth/clients (oauth-clients:* permissions), not here');
    },
  }),
);
