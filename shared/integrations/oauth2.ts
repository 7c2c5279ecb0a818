// OAuth 2 auths (DESIGN.md 7): the organization's client for an integration auth, the
// authorization request a hosted link redirects to, and the token endpoint calls (code exchange
// and refresh) made by the worker under the egress policy. Tokens, the client secret, the code
// and the PKCE verifier are sealed at rest and never enter Temporal history or the logs.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { request } from 'undici';
import type { Config } from '../config.ts';
import { checkDestination, EgressError, egressDispatcher } from '../egress.ts';
import { readCapped } from '../http/read-capped.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import type { IntegrationAuth, OAuth2Settings } from './auths.ts';
import type { TokenEndpointAuthMethod } from './oauth2-settings.ts';
import { internalHostsAllowed } from './uris.ts';

export const CALLBACK_PATH = '/api/integrations/connect/callback';
const TOKEN_TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 256 * 1024;

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

/** Stores (or replaces) the organization's client for one auth; the secret sealed. */
export async function putOAuthClient(
  knex: Knex,
  key: Buffer | undefined,
  where: { orgId: string; integrationId: string; authKey: string },
  client: OAuthClient,
): Promise<{ created: boolean; updatedAt: Date }> {
  const sealed = encryptSecret(key, client.clientSecret);
  const [row] = await knex('integration_oauth_clients')
    .insert({
      org_id: where.orgId,
      integration_package_id: where.integrationId,
      auth_key: where.authKey,
      client_id: client.clientId,
      client_secret_sealed: sealed,
    })
    .onConflict(['org_id', 'integration_package_id', 'auth_key'])
    .merge({ client_id: client.clientId, client_secret_sealed: sealed, updated_at: knex.fn.now() })
    .returning(['created_at', 'updated_at', knex.raw('(xmax = 0) as inserted')]);
  return { created: Boolean(row.inserted), updatedAt: row.updated_at };
}

export async function findOAuthClient(
  knex: Knex,
  key: Buffer | undefined,
  orgId: string,
  integrationId: string,
  authKey: string,
): Promise<OAuthClient | undefined> {
  const row = await knex('integration_oauth_clients').where({ org_id: orgId, integration_package_id: integrationId, auth_key: authKey }).first();
  return row ? { clientId: row.client_id, clientSecret: decryptSecret(key, row.client_secret_sealed) } : undefined;
}

export function redirectUri(publicUrl: string): string {
  return new URL(CALLBACK_PATH, publicUrl).toString();
}

/** Granted scopes as a list: the auth's scopes then the link's, without repeats. */
export function requestedScopes(settings: OAuth2Settings, extra: readonly string[]): string[] {
  return [...new Set([...settings.scopes, ...extra])];
}

/**
 * The provider URL a hosted link redirects to, with the fresh `state` and PKCE verifier the
 * caller stores (state hashed, verifier sealed) with the link.
 */
export function authorizationRequest(
  settings: OAuth2Settings,
  clientId: string,
  callback: string,
  scopes: string[],
): { url: string; state: string; verifier?: string } {
  const state = randomBytes(32).toString('base64url');
  const url = new URL(settings.authorizationUrl);
  // The auth's own parameters first: those the service sets below always win (import refuses them anyway).
  for (const [name, value] of Object.entries(settings.authorizationParams)) url.searchParams.set(name, value);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', callback);
  if (scopes.length) url.searchParams.set('scope', scopes.join(settings.scopeSeparator));
  url.searchParams.set('state', state);
  let verifier: string | undefined;
  if (settings.pkce) {
    verifier = randomBytes(48).toString('base64url');
    url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return { url: url.toString(), state, verifier };
}

/** What a connection of an OAuth 2 auth stores, sealed. */
export interface OAuthCredential {
  access_token: string;
  refresh_token?: string;
  /** ISO time, when the provider said `expires_in`. */
  expires_at?: string;
  token_type: string;
}

/** The provider refused the grant (4xx with an OAuth error): the person must connect again. */
export class TokenRefused extends Error {
  override name = 'TokenRefused';
}

/** The token endpoint could not be reached or answered 5xx: worth retrying. */
export class TokenUnavailable extends Error {
  override name = 'TokenUnavailable';
}

export interface TokenResult {
  credential: OAuthCredential;
  /** The granted scopes when the provider says them, else undefined. */
  scopes?: string[];
}

/**
 * How the client authenticates, per the auth's `token_endpoint_auth_method` (RFC 6749 2.3.1):
 * HTTP Basic with both parts form-encoded, or `client_id` and `client_secret` in the body
 * (`client_secret_post`), or `client_id` alone for a public client (`none`).
 */
export function clientAuthentication(method: TokenEndpointAuthMethod, client: OAuthClient): { headers: Record<string, string>; body: Record<string, string> } {
  if (method === 'client_secret_post') return { headers: {}, body: { client_id: client.clientId, client_secret: client.clientSecret } };
  if (method === 'none') return { headers: {}, body: { client_id: client.clientId } };
  const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64');
  return { headers: { authorization: `Basic ${basic}` }, body: {} };
}

/**
 * POSTs a grant to the auth's token endpoint (the client authenticated as the auth says, no
 * redirect followed, the egress policy applied) and returns the new credential. `previous`
 * keeps a refresh token the provider does not rotate.
 */
export async function tokenRequest(
  config: Pick<Config, 'egressAllowInternalHosts' | 'extraCaCertsPath'>,
  auth: IntegrationAuth,
  client: OAuthClient,
  grant: Record<string, string>,
  previous?: OAuthCredential,
): Promise<TokenResult> {
  const settings = auth.oauth2!;
  const allowInternal = internalHostsAllowed(auth.authorizedUris, config.egressAllowInternalHosts);
  try {
    await checkDestination(settings.tokenUrl, { allowInternalHosts: allowInternal });
  } catch (err) {
    if (err instanceof EgressError) throw new TokenRefused(`The token endpoint is not allowed: ${err.message}`);
    throw err;
  }
  const authn = clientAuthentication(settings.tokenEndpointAuthMethod, client);
  let status: number;
  let text: string;
  const dispatcher = egressDispatcher(allowInternal, TOKEN_TIMEOUT_MS, config.extraCaCertsPath);
  try {
    const res = await request(settings.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...authn.headers },
      body: new URLSearchParams({ ...grant, ...authn.body }).toString(),
      dispatcher,
      headersTimeout: TOKEN_TIMEOUT_MS,
      bodyTimeout: TOKEN_TIMEOUT_MS,
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
    status = res.statusCode;
    text = (await readCapped(res.body, MAX_BODY_BYTES, () => new TokenUnavailable('The token endpoint answered more than 256 KiB'))).toString('utf8');
  } catch (err) {
    if (err instanceof TokenUnavailable) throw err;
    throw new TokenUnavailable(`The token endpoint could not be reached: ${(err as Error).message}`);
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // a non-JSON answer: judged by status below
  }
  if (status >= 500 || status === 429) throw new TokenUnavailable(`The token endpoint answered ${status}`);
  if (status !== 200 || typeof body.access_token !== 'string') {
    const error = typeof body.error === 'string' ? body.error.slice(0, 100) : undefined;
    throw new TokenRefused(`The token endpoint answered ${status}${error ? ` ${error}` : ''}`);
  }
  const expiresIn = Number(body.expires_in);
  const credential: OAuthCredential = {
    access_token: body.access_token,
    refresh_token: typeof body.refresh_token === 'string' ? body.refresh_token : previous?.refresh_token,
    expires_at: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(Date.now() + expiresIn * 1000).toISOString() : undefined,
    token_type: typeof body.token_type === 'string' ? body.token_type : 'Bearer',
  };
  const scopes = typeof body.scope === 'string' ? body.scope.split(/[\s,]+/).filter(Boolean) : undefined;
  return { credential, scopes };
}

/** When to refresh a token expiring at `expiresAt`: a quarter of its life early, at most five minutes. */
export function refreshAt(expiresAt: Date, obtainedAt: Date): number {
  const life = Math.max(0, expiresAt.getTime() - obtainedAt.getTime());
  return expiresAt.getTime() - Math.min(5 * 60_000, life / 4);
}

// ---- the API's side of a callback: the code goes sealed into connect_attempts ----

/** The sealed fields of an OAuth 2 connect attempt (only the activity opens them). */
export interface CodeExchangeFields {
  oauth2_code: string;
  redirect_uri: string;
  code_verifier?: string;
}
