// Credentials in SPEC 5.1 order: OIDC access token, API key, session cookie.
import { EndUser } from '../../shared/db/models.ts';
import { problem } from '../../shared/errors.ts';
import { sha256Hex } from '../../shared/crypto.ts';
import { findKey, isLive } from '../../shared/identity/api-keys.ts';
import { findClientRow, SPACE_TOKEN_SCOPES } from '../../shared/oidc/clients.ts';
import { verifyAccessToken } from '../../shared/oidc/tokens.ts';
import { isScope } from '../../shared/permissions.ts';
import { runForSinkSecret } from '../../shared/runs/sink.ts';
import { SESSION_COOKIE, extendIfDue, findSession } from '../../shared/identity/sessions.ts';
import type { AppContext, AuthState, OidcToken } from '../context.ts';
import type { RouteDef } from '../route.ts';
import { setSessionCookie } from '../session-cookie.ts';

/** Credentials bound to one organization and carrying a scope ceiling: API keys, org- and space-level tokens. */
export function boundOrgId(auth: AuthState): string | undefined {
  if (auth.kind === 'api_key') return auth.key.org_id;
  return auth.kind === 'oidc' ? auth.orgId : undefined;
}

/** The space an API key or a space-level token is pinned to. */
export function boundSpaceId(auth: AuthState): string | undefined {
  if (auth.kind === 'api_key') return auth.key.space_id;
  return auth.kind === 'oidc' ? auth.spaceId : undefined;
}

/** The permissions the credential itself carries (a ceiling on its holder's role), if any. */
export function credentialScopes(auth: AuthState): readonly string[] | undefined {
  if (auth.kind === 'api_key') return auth.key.scopes;
  return auth.kind === 'oidc' ? auth.scopes : undefined;
}

/** Who a per-identity counter counts (SPEC 8.1). */
export function credentialIdentity(auth: AuthState): string {
  if (auth.kind === 'api_key') return `apikey:${auth.key.id}`;
  if (auth.kind === 'oidc' && auth.endUserId) return `end_user:${auth.endUserId}`;
  return `user:${auth.userId}`;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const KEY_TOUCH_EVERY_MS = 60_000;

async function fromBearer(ctx: AppContext, bearer: string): Promise<AuthState> {
  if (!JWT_SHAPE.test(bearer)) return fromApiKey(ctx, bearer);
  // Without the oidc module nobody issues access tokens: a JWT is no credential here.
  if (!ctx.services.config.modules.has('oidc')) throw problem('unauthorized', 'Access tokens are not accepted: the oidc module is not enabled (MODULES)');
  return fromAccessToken(ctx, bearer);
}

async function fromAccessToken(ctx: AppContext, token: string): Promise<OidcToken> {
  const { knex, config } = ctx.services;
  const claims = await verifyAccessToken(knex, config, token);
  if (!claims) throw problem('unauthorized', 'The access token is invalid or expired');
  const granted = (claims.scope ?? '').split(' ').filter(isScope);
  const base = { kind: 'oidc' as const, level: claims.lvl, clientId: claims.client_id, expiresAt: new Date(claims.exp * 1000) };
  if (claims.lvl === 'instance') return { ...base, userId: claims.sub, scopes: granted };
  if (claims.lvl === 'org') return { ...base, userId: claims.sub, scopes: granted, orgId: claims.org_id };
  // A space-level token acts as its end-user with the authority of the client's creator; both must still be there.
  const client = await findClientRow(knex, claims.client_id);
  const endUser = client?.created_by ? await EndUser.query(knex).findOne({ id: claims.sub, org_id: client.org_id!, space_id: client.space_id! }) : undefined;
  if (!client?.created_by || !endUser) throw problem('unauthorized', 'The access token is no longer valid: its application or end-user was removed');
  return {
    ...base,
    userId: client.created_by,
    scopes: granted.filter((s) => SPACE_TOKEN_SCOPES.includes(s)),
    orgId: endUser.org_id,
    spaceId: endUser.space_id,
    endUserId: endUser.id,
  };
}

async function fromApiKey(ctx: AppContext, raw: string): Promise<AuthState> {
  const { knex } = ctx.services;
  // Kept by the hash of the key, never the key itself; revocation moves the access epoch, expiry is checked here.
  const key = await ctx.state.access!.get(`key:${sha256Hex(raw)}`, () => findKey(knex, raw));
  if (!key || !isLive(key)) throw problem('unauthorized', 'The API key is invalid, expired or revoked');
  if (!key.last_used_at || Date.now() - key.last_used_at.getTime() > KEY_TOUCH_EVERY_MS) {
    key.last_used_at = new Date(); // the kept row too, so the next request does not touch it again
    await knex('api_keys').where({ id: key.id }).update({ last_used_at: key.last_used_at });
  }
  return { kind: 'api_key', userId: key.created_by, key };
}

/** Query `token` on Server-Sent Events routes: API keys only (SPEC 5.3, 5.5). */
async function fromQueryToken(ctx: AppContext, token: string): Promise<AuthState> {
  if (JWT_SHAPE.test(token)) throw problem('unauthorized', 'The token query parameter takes API keys only; send other credentials in the Authorization header');
  return fromApiKey(ctx, token);
}

async function fromCookie(ctx: AppContext, token: string): Promise<AuthState> {
  const { knex } = ctx.services;
  const session = await findSession(knex, token);
  if (session?.realm !== 'platform') throw problem('unauthorized', 'The session is invalid or expired');
  if (await extendIfDue(knex, session)) setSessionCookie(ctx, token, session.expires_at);
  return { kind: 'session', userId: session.user_id, session };
}

/**
 * Reads the credential; throws 401 when the route needs one and none is valid. `optimistic`: on
 * the access epoch last seen, for a route that confirms it itself (RouteDef.confirmsAccess).
 */
export async function authenticate(ctx: AppContext, route: RouteDef, optimistic = false): Promise<void> {
  if (route.auth === 'none') return;
  const header = ctx.get('Authorization');
  if (route.auth === 'sink') {
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m) throw problem('unauthorized', 'Send the sink secret as "Authorization: Bearer sink_..."');
    ctx.state.sinkRun = await runForSinkSecret(ctx.services.knex, ctx.params.id, m[1]);
    return;
  }
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  const token = route.queryCredentials ? ctx.query.token : undefined;
  const { accessCache, knex } = ctx.services;
  ctx.state.access = optimistic ? await accessCache.optimisticView(knex) : await accessCache.view(knex);
  let auth: AuthState;
  if (header) {
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m) throw problem('unauthorized', 'Authorization must be "Bearer <token>"');
    auth = await fromBearer(ctx, m[1]);
  } else if (token !== undefined && token !== '') {
    if (typeof token !== 'string') throw problem('unauthorized', 'Send one token query parameter');
    auth = await fromQueryToken(ctx, token);
  } else if (cookie) {
    auth = await fromCookie(ctx, cookie);
  } else {
    throw problem('unauthorized', 'No credential: send an API key as "Authorization: Bearer svc_..." or a session cookie');
  }
  if (route.auth === 'session' && auth.kind !== 'session') {
    throw problem('forbidden', 'This operation needs a signed-in session; API keys cannot perform it');
  }
  ctx.state.auth = auth;
}

/** The session credential of a `auth: 'session'` route (the pipeline guarantees it). */
export function sessionAuth(ctx: AppContext): Extract<AuthState, { kind: 'session' }> {
  const auth = ctx.state.auth;
  if (auth?.kind !== 'session') throw problem('unauthorized', 'This operation needs a signed-in session');
  return auth;
}
