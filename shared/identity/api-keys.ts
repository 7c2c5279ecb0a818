// API keys (SPEC 2.2, 4.3, 5.3): only the SHA-256 and the display prefix are stored; the
// effective permissions are recomputed at every request from the creator's current roles.
import type { Knex } from 'knex';
import { generateApiKey, isWellFormedApiKey } from '../api-key-format.ts';
import { sha256Hex } from '../crypto.ts';
import { ApiKey, type Space } from '../db/models.ts';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { type ModuleName, withoutDisabledScopes } from '../modules.ts';
import { KEY_GRANTABLE_SCOPES, NON_KEY_SCOPES, type OrgRole, type Scope, intersect, isScope } from '../permissions.ts';
import { orgScopes } from './tenancy.ts';

/**
 * What the caller may put on a key: grantable scopes it holds itself, in the space and at
 * organization level (models, proxies, OAuth clients).
 */
export function grantableBy(spaceHeld: ReadonlySet<Scope>, orgHeld: ReadonlySet<Scope>): Scope[] {
  return KEY_GRANTABLE_SCOPES.filter((s) => spaceHeld.has(s) || orgHeld.has(s));
}

/**
 * The scopes a new key gets. A scope no key can carry (unknown, or key management) is
 * 400 `invalid_request`; scopes the creator lacks are dropped silently; none = all grantable.
 */
export function keyScopesFor(requested: string[] | undefined, grantable: Scope[]): Scope[] {
  if (!requested || requested.length === 0) return grantable;
  const bad = requested.filter((s) => !isScope(s) || NON_KEY_SCOPES.has(s));
  if (bad.length) {
    throw problem('invalid_request', {
      detail: `No API key can carry the scope${bad.length > 1 ? 's' : ''} ${bad.map((s) => `"${s}"`).join(', ')}`,
      param: 'scopes',
    });
  }
  return [...intersect(requested as Scope[], new Set(grantable))];
}

export async function insertApiKey(
  knex: Knex,
  input: { orgId: string; spaceId: string; userId: string; name: string; scopes: Scope[]; expiresAt: Date | null },
): Promise<{ key: string; row: ApiKey }> {
  const { key, keyPrefix } = generateApiKey();
  const row = await ApiKey.query(knex).insertAndFetch({
    id: newId('key'),
    org_id: input.orgId,
    space_id: input.spaceId,
    created_by: input.userId,
    name: input.name,
    key_hash: sha256Hex(key),
    key_prefix: keyPrefix,
    scopes: input.scopes,
    expires_at: input.expiresAt,
  });
  return { key, row };
}

/** Who makes or revokes keys in a space, and what they hold there. */
export interface KeyHolder {
  orgId: string;
  space: Pick<Space, 'id' | 'kind'>;
  orgRole: OrgRole | undefined;
  userId: string;
  /** The person's effective permissions in the space. */
  scopes: ReadonlySet<Scope>;
  /** The modules that run (MODULES): scopes of the others are nobody's. */
  modules: ReadonlySet<ModuleName>;
}

/** The scopes the holder can put on a key (none in a personal space, which takes no keys). */
export function availableKeyScopes(h: KeyHolder): Scope[] {
  return h.space.kind === 'personal' ? [] : grantableBy(h.scopes, withoutDisabledScopes(orgScopes(h.orgRole), h.modules));
}

/**
 * Creates a key (`POST /api/api-keys` and the console's form): refused in a personal space, with
 * an expiry not in the future (400 naming `expiresAt`), or with a scope no key can carry; the
 * raw key is returned this once.
 */
export async function createApiKey(
  knex: Knex,
  h: KeyHolder,
  req: { name: string; scopes?: string[]; expiresAt: Date | null },
): Promise<{ key: string; row: ApiKey }> {
  if (h.space.kind === 'personal') throw problem('personal_space_takes_no_keys', 'API keys cannot be created in a personal space');
  if (req.expiresAt && req.expiresAt.getTime() <= Date.now()) {
    throw problem('validation_failed', {
      detail: 'expiresAt must be in the future',
      errors: [{ field: 'expiresAt', code: 'out_of_range', message: 'expiresAt must be in the future' }],
    });
  }
  const scopes = keyScopesFor(req.scopes, availableKeyScopes(h));
  return insertApiKey(knex, { orgId: h.orgId, spaceId: h.space.id, userId: h.userId, name: req.name, scopes, expiresAt: req.expiresAt });
}

/** The space's keys still in force (neither revoked nor expired). */
export function liveApiKeys(knex: Knex, orgId: string, spaceId: string): Knex.QueryBuilder {
  return knex('api_keys')
    .where({ org_id: orgId, space_id: spaceId })
    .whereNull('revoked_at')
    .where((w) => w.whereNull('expires_at').orWhere('expires_at', '>', new Date()));
}

/**
 * Revokes a key of the space at once (`DELETE /api/api-keys/{id}` and the console): the holder's
 * own, or anyone's with `spaces:write`; 404 for an unknown or already revoked key.
 */
export async function revokeApiKey(knex: Knex, h: Pick<KeyHolder, 'orgId' | 'space' | 'userId' | 'scopes'>, id: string): Promise<ApiKey> {
  const key = await ApiKey.query(knex).findOne({ id, org_id: h.orgId, space_id: h.space.id });
  if (!key || key.revoked_at) throw problem('not_found', 'No such API key');
  if (key.created_by !== h.userId && !h.scopes.has('spaces:write')) {
    throw problem('forbidden', "Only the key's creator or a space admin can revoke it");
  }
  await ApiKey.query(knex).patch({ revoked_at: new Date() }).where({ id: key.id });
  return key;
}

/** The live key for a bearer value, or undefined. Malformed values never reach the database. */
/** The key row for a bearer value, live or not, or undefined. Malformed values never reach the database. */
export async function findKey(knex: Knex, bearer: string): Promise<ApiKey | undefined> {
  if (!isWellFormedApiKey(bearer)) return undefined;
  return await ApiKey.query(knex).findOne({ key_hash: sha256Hex(bearer) });
}

/** Neither revoked nor past its expiry, now. */
export function isLive(row: ApiKey): boolean {
  return !row.revoked_at && !(row.expires_at && row.expires_at.getTime() <= Date.now());
}
