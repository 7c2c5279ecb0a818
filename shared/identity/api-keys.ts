// API keys (SPEC 2.2, 4.3, 5.3): only the SHA-256 and the display prefix are stored; the
// effective permissions are recomputed at every request from the creator's current roles.
import type { Knex } from 'knex';
import { generateApiKey, isWellFormedApiKey } from '../api-key-format.ts';
import { sha256Hex } from '../crypto.ts';
import { ApiKey } from '../db/models.ts';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { KEY_GRANTABLE_SCOPES, NON_KEY_SCOPES, type Scope, intersect, isScope } from '../permissions.ts';

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
