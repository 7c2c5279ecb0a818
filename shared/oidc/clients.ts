// OAuth clients (DESIGN.md section 7): one `oauth_clients` row each, whether made through
// `/api/oauth/clients` (by a person, at a level) or by dynamic registration (RFC 7591, no
// session: instance level, no organization). The authorization server reads them as
// oidc-provider client metadata; the secret is sealed at rest and unsealed only here.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { type Scope, SCOPES } from '../permissions.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';

export type ClientLevel = 'instance' | 'org' | 'space';

export interface OAuthClientRow {
  id: string;
  client_id: string;
  client_secret_sealed: string | null;
  name: string;
  level: ClientLevel;
  org_id: string | null;
  space_id: string | null;
  redirect_uris: string[];
  scopes: string[];
  allow_signup: boolean;
  created_by: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** OpenID scopes every client may ask for, besides the service's permissions. */
export const OIDC_SCOPES = ['openid', 'offline_access', 'email', 'profile'] as const;

/** SPEC 5.5 / DESIGN.md 7: the only permissions a space-level (end-user) token can carry. */
export const SPACE_TOKEN_SCOPES: readonly Scope[] = [
  'agents:read',
  'agents:run',
  'runs:read',
  'runs:cancel',
  'end-users:read',
  'integrations:read',
  'integrations:connect',
  'integrations:disconnect',
];

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The permissions a client of this level may be granted. */
export function grantableScopes(level: ClientLevel): readonly string[] {
  return level === 'space' ? SPACE_TOKEN_SCOPES : SCOPES;
}

/** The row as oidc-provider client metadata (plus our own `level`, `org_id`, `space_id`, `allow_signup`). */
export function clientMetadata(row: OAuthClientRow, secretsKey: Buffer | undefined): Record<string, unknown> {
  const secret = row.client_secret_sealed ? decryptSecret(secretsKey, row.client_secret_sealed) : undefined;
  const redirects = row.redirect_uris;
  const extra = row.metadata ?? {};
  return {
    // RFC 7591 metadata a dynamic registration sent (or defaults for clients made through the API).
    grant_types: redirects.length ? ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT] : ['refresh_token', DEVICE_CODE_GRANT],
    response_types: redirects.length ? ['code'] : [],
    ...extra,
    client_id: row.client_id,
    client_name: row.name,
    redirect_uris: redirects,
    scope: [...OIDC_SCOPES, ...row.scopes].join(' '),
    ...(secret
      ? { client_secret: secret, token_endpoint_auth_method: extra.token_endpoint_auth_method ?? 'client_secret_basic' }
      : { token_endpoint_auth_method: 'none' }),
    level: row.level,
    org_id: row.org_id,
    space_id: row.space_id,
    allow_signup: row.allow_signup,
  };
}

export async function findClientRow(knex: Knex, clientId: string): Promise<OAuthClientRow | undefined> {
  return knex('oauth_clients').where({ client_id: clientId }).first();
}

/**
 * Stores a client that registered itself (RFC 7591, no session): instance level, permissions
 * as it asked among every grantable one; its tokens still carry only what the signed-in person
 * holds (tokens are intersected with the person's role).
 */
export async function saveRegisteredClient(knex: Knex, secretsKey: Buffer | undefined, clientId: string, payload: Record<string, unknown>): Promise<void> {
  const {
    client_id: _id,
    client_secret: secret,
    client_name: name,
    redirect_uris: redirects,
    scope,
    level: _level,
    org_id: _org,
    space_id: _space,
    allow_signup: _signup,
    ...metadata
  } = payload as Record<string, any>;
  const requested = typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [];
  const row = {
    client_id: clientId,
    client_secret_sealed: typeof secret === 'string' && secret ? encryptSecret(secretsKey, secret) : null,
    name: typeof name === 'string' && name ? name.slice(0, 200) : 'Registered client',
    level: 'instance',
    redirect_uris: JSON.stringify(Array.isArray(redirects) ? redirects : []),
    scopes: JSON.stringify(requested.filter((s) => (SCOPES as readonly string[]).includes(s))),
    metadata: JSON.stringify(metadata),
    updated_at: new Date(),
  };
  const existing = await findClientRow(knex, clientId);
  if (existing) await knex('oauth_clients').where({ client_id: clientId }).update(row);
  else await knex('oauth_clients').insert({ id: newId('oac'), ...row });
}

/** RFC 8252 section 7.3: plain http only towards the loopback interface (native apps). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why a redirect URI cannot be registered, or undefined when it can (https, or http to loopback; no fragment). */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash || uri.includes('#')) return 'must not contain a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must use https (http only for localhost, 127.0.0.1 or [::1])';
}

/**
 * The permissions among requested scopes. OIDC libraries register clients listing the OpenID
 * scopes too; those are always allowed, so listing them changes nothing and they are not stored.
 */
export function permissionScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !(OIDC_SCOPES as readonly string[]).includes(s));
}

/** The requested permissions a client of this level cannot be granted. */
export function scopesBeyondLevel(level: ClientLevel, scopes: readonly string[]): string[] {
  const grantable = new Set(grantableScopes(level));
  return scopes.filter((s) => !grantable.has(s));
}

/**
 * Revokes everything oidc-provider holds for the client (grants, codes, refresh tokens, device
 * codes): each such payload names its `clientId`. Already issued JWT access tokens stay valid
 * until they expire (SPEC 5.4).
 */
export async function revokeClientGrants(knex: Knex, clientId: string): Promise<number> {
  return knex('oidc_payloads').whereRaw("payload->>'clientId' = ?", [clientId]).delete();
}
