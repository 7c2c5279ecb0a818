// Credentials in SPEC 5.1 order: OIDC access token, API key, session cookie.
import type { ApiKey, Session } from '../../shared/db/models.ts';
import { problem } from '../../shared/errors.ts';
import { findLiveKey } from '../../shared/identity/api-keys.ts';
import { runForSinkSecret } from '../../shared/runs/sink.ts';
import { SESSION_COOKIE, extendIfDue, findSession } from '../../shared/identity/sessions.ts';
import type { AppContext, RouteDef } from '../route.ts';
import { setSessionCookie } from '../session-cookie.ts';

export type AuthState =
  | { kind: 'session'; userId: string; session: Session }
  | { kind: 'api_key'; userId: string; key: ApiKey };

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const KEY_TOUCH_EVERY_MS = 60_000;

async function fromBearer(ctx: AppContext, bearer: string): Promise<AuthState> {
  if (JWT_SHAPE.test(bearer)) {
    throw problem('unauthorized', 'OIDC access tokens are not accepted: the oidc module is not enabled on this instance');
  }
  return fromApiKey(ctx, bearer);
}

async function fromApiKey(ctx: AppContext, raw: string): Promise<AuthState> {
  const { knex } = ctx.services;
  const key = await findLiveKey(knex, raw);
  if (!key) throw problem('unauthorized', 'The API key is invalid, expired or revoked');
  if (!key.last_used_at || Date.now() - key.last_used_at.getTime() > KEY_TOUCH_EVERY_MS) {
    await knex('api_keys').where({ id: key.id }).update({ last_used_at: new Date() });
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

/** Reads the credential; throws 401 when the route needs one and none is valid. */
export async function authenticate(ctx: AppContext, route: RouteDef): Promise<void> {
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
