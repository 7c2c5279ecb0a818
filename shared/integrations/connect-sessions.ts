// Hosted connect links (SPEC 4.7, DESIGN.md 7): `connect/session` and every `connection_missing`
// refusal hand out `{PUBLIC_URL}/api/integrations/connect/start?token=...`, single use, valid ten
// minutes. Only the token's SHA-256 is stored; the row says who connects what.
import type { Knex } from 'knex';
import { sha256Hex } from '../crypto.ts';
import { newToken } from '../ids.ts';
import { problem } from '../errors.ts';
import { findSpace, orgRole, spaceScopes } from '../identity/tenancy.ts';
import type { Integration } from './auths.ts';
import { authOf } from './connect.ts';
import { type ConnectionOwner, type ConnectionRow, ownedConnections } from './connections.ts';

export const CONNECT_LINK_TTL_MS = 10 * 60_000;

export interface ConnectSessionRequest {
  orgId: string;
  spaceId: string;
  /** '@scope/name' */
  integrationId: string;
  authKey: string;
  owner: ConnectionOwner;
  scopes?: string[];
  connectionId?: string;
}

/** Who connects what, as a connection would record it, plus the link's own state. */
export type ConnectSessionRow = Pick<ConnectionRow, 'org_id' | 'space_id' | 'integration_package_id' | 'auth_key' | 'owner_type' | 'owner_id' | 'scopes'> & {
  token_hash: string;
  connection_id: string | null;
  expires_at: Date;
  used_at: Date | null;
};

export async function createConnectSession(knex: Knex, publicUrl: string, req: ConnectSessionRequest): Promise<{ connect_url: string; expiresAt: string }> {
  const token = newToken();
  const expiresAt = new Date(Date.now() + CONNECT_LINK_TTL_MS);
  await knex('connect_sessions').insert({
    token_hash: sha256Hex(token),
    org_id: req.orgId,
    space_id: req.spaceId,
    integration_package_id: req.integrationId,
    auth_key: req.authKey,
    owner_type: req.owner.type,
    owner_id: req.owner.id,
    scopes: req.scopes ?? [],
    connection_id: req.connectionId ?? null,
    expires_at: expiresAt,
  });
  const url = new URL('/api/integrations/connect/start', publicUrl);
  url.searchParams.set('token', token);
  return { connect_url: url.toString(), expiresAt: expiresAt.toISOString() };
}

/**
 * A link for `owner` to connect one auth of `integration` (404 for an auth it does not have), or
 * to reconnect `connectionId` in place, which must be one of the owner's of that auth (404
 * naming it otherwise): `POST .../connect/session` and the console's connect buttons.
 */
export async function requestConnectLink(
  knex: Knex,
  publicUrl: string,
  where: { orgId: string; spaceId: string; owner: ConnectionOwner },
  integration: Integration,
  authKey: string,
  opts: { scopes?: string[]; connectionId?: string } = {},
): Promise<{ connect_url: string; expiresAt: string }> {
  const auth = authOf(integration, authKey);
  if (opts.connectionId) {
    const existing = await ownedConnections(knex, where).where({ id: opts.connectionId, integration_package_id: integration.id, auth_key: auth.key }).first();
    if (!existing) throw problem('not_found', { detail: `No connection ${opts.connectionId} of yours for this auth`, param: 'connection_id' });
  }
  return createConnectSession(knex, publicUrl, {
    ...where,
    integrationId: integration.id,
    authKey: auth.key,
    scopes: opts.scopes ? [...new Set(opts.scopes)] : undefined,
    connectionId: opts.connectionId,
  });
}

/**
 * The link's row while it can still be used, or undefined: not expired, not used, and its owner
 * still able to connect in its space (a person who left, lost `integrations:connect`, or an
 * end-user deleted since the link was made cannot be connected for through it).
 */
export async function liveConnectSession(knex: Knex, token: string): Promise<ConnectSessionRow | undefined> {
  const row = (await knex('connect_sessions')
    .where({ token_hash: sha256Hex(token) })
    .first()) as ConnectSessionRow | undefined;
  if (!row || row.used_at || row.expires_at.getTime() <= Date.now()) return undefined;
  return (await ownerMayConnect(knex, row)) ? row : undefined;
}

async function ownerMayConnect(knex: Knex, row: ConnectSessionRow): Promise<boolean> {
  if (row.owner_type === 'end_user') {
    return !!(await knex('end_users').where({ id: row.owner_id, org_id: row.org_id, space_id: row.space_id }).first('id'));
  }
  const role = await orgRole(knex, row.org_id, row.owner_id);
  const space = role && (await findSpace(knex, row.org_id, row.space_id));
  const held = space ? await spaceScopes(knex, row.owner_id, space, role) : null;
  return !!held?.has('integrations:connect');
}
