// What a long-lived read (an SSE stream, a long-poll) was granted when it opened, and whether
// that still holds. Credential and membership rows announce their changes on
// ACCESS_CHANGES_CHANNEL (migration 008); the API re-checks the grants they touch with
// `recheckGrant`, applying the same rules as a new request would (SPEC 3.2, 5.1, 5.3).
import type { Knex } from 'knex';
import { ApiKey, EndUser, Session } from '../db/models.ts';
import { intersect, ORG_ROLE_SCOPES, type Scope, SPACE_ROLE_SCOPES, type SpaceRole } from '../permissions.ts';
import { findSpace, orgRole, spaceScopes } from './tenancy.ts';

export const ACCESS_CHANGES_CHANNEL = 'access_changes';

/** One `access_changes` payload: whose access may have changed. */
export interface AccessChange {
  userId?: string;
  orgId?: string;
  endUserId?: string;
}

export interface AccessGrant {
  kind: 'api_key' | 'session' | 'oidc';
  /** The API key id, session id, or (an access token) its client's id. */
  credentialId: string;
  /** An access token's permissions (it is not stored: they cannot change). */
  tokenScopes?: readonly string[];
  userId: string;
  orgId: string;
  spaceId: string;
  endUserId?: string;
  viewAs?: SpaceRole;
  /** When the credential expires as it stood at the last check (sessions may be extended). */
  expiresAt: Date | null;
}

/** Why a long-lived read ends: the credential itself is gone, or what it may read changed. */
export type AccessLoss = 'credential_revoked' | 'access_changed';

export type GrantCheck = { ok: true; scopes: ReadonlySet<Scope>; expiresAt: Date | null } | { ok: false; reason: AccessLoss };

/**
 * X-View-As narrows to a preset role; an API key to its own scopes (both ceilings, SPEC 5.3).
 * Someone holding the previewed role is an organization `member` (owners and admins act as
 * `admin` everywhere), so at organization level the preview keeps what a member holds there.
 */
export function narrowScopes(held: ReadonlySet<Scope>, ceilings: { viewAs?: SpaceRole; keyScopes?: readonly string[] }): ReadonlySet<Scope> {
  let scopes = held;
  if (ceilings.viewAs) scopes = intersect([...SPACE_ROLE_SCOPES[ceilings.viewAs], ...ORG_ROLE_SCOPES.member], scopes);
  if (ceilings.keyScopes) scopes = intersect(ceilings.keyScopes as Scope[], scopes);
  return scopes;
}

/** The grant's scopes now, or why it no longer holds (without `needs`, access changed). */
export async function recheckGrant(knex: Knex, grant: AccessGrant, needs: Scope): Promise<GrantCheck> {
  const now = Date.now();
  let keyScopes: string[] | undefined;
  let expiresAt: Date | null;
  if (grant.kind === 'api_key') {
    const key = await ApiKey.query(knex).findById(grant.credentialId);
    if (!key || key.revoked_at || (key.expires_at && key.expires_at.getTime() <= now)) return { ok: false, reason: 'credential_revoked' };
    keyScopes = key.scopes;
    expiresAt = key.expires_at;
  } else if (grant.kind === 'oidc') {
    // A JWT is not stored: it holds until it expires, with the permissions it carries.
    if (grant.expiresAt && grant.expiresAt.getTime() <= now) return { ok: false, reason: 'credential_revoked' };
    keyScopes = grant.tokenScopes ? [...grant.tokenScopes] : undefined;
    expiresAt = grant.expiresAt;
  } else {
    const session = await Session.query(knex).findById(grant.credentialId);
    if (!session || session.expires_at.getTime() <= now) return { ok: false, reason: 'credential_revoked' };
    expiresAt = session.expires_at;
  }
  const role = await orgRole(knex, grant.orgId, grant.userId);
  // A key whose creator left the organization is revoked with it (SPEC 3.2).
  if (!role) return { ok: false, reason: grant.kind === 'session' ? 'access_changed' : 'credential_revoked' };
  const space = await findSpace(knex, grant.orgId, grant.spaceId);
  const held = space ? await spaceScopes(knex, grant.userId, space, role) : null;
  if (!held) return { ok: false, reason: 'access_changed' };
  if (grant.endUserId && !(await EndUser.query(knex).findOne({ id: grant.endUserId, org_id: grant.orgId, space_id: grant.spaceId }))) {
    return { ok: false, reason: 'access_changed' };
  }
  const scopes = narrowScopes(held, { viewAs: grant.viewAs, keyScopes });
  if (!scopes.has(needs)) return { ok: false, reason: 'access_changed' };
  return { ok: true, scopes, expiresAt };
}
