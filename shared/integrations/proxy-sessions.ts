// Credential-proxy sessions (SPEC 4.7, 8.5; DESIGN.md 7): a short-lived `cps_` id naming whose
// connections the credential proxy may use, in one space. It is no secret of its own (the
// caller still authenticates every proxied call); it pins the owner so that a call made for an
// end-user cannot borrow another actor's connections.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import type { ConnectionOwner } from './connections.ts';

export interface ProxySessionRow {
  id: string;
  org_id: string;
  space_id: string;
  owner_type: ConnectionOwner['type'];
  owner_id: string;
  expires_at: Date;
  created_at: Date;
}

export interface ProxySessionScope {
  orgId: string;
  spaceId: string;
  owner: ConnectionOwner;
}

/** A new session valid `ttlSeconds`; the owner's expired sessions are swept on the way. */
export async function createProxySession(knex: Knex, where: ProxySessionScope, ttlSeconds: number): Promise<ProxySessionRow> {
  await knex('credential_proxy_sessions').where({ owner_type: where.owner.type, owner_id: where.owner.id }).where('expires_at', '<=', knex.fn.now()).delete();
  const [row] = await knex('credential_proxy_sessions')
    .insert({
      id: newId('cps'),
      org_id: where.orgId,
      space_id: where.spaceId,
      owner_type: where.owner.type,
      owner_id: where.owner.id,
      expires_at: new Date(Date.now() + ttlSeconds * 1000),
    })
    .returning('*');
  return row as ProxySessionRow;
}

/** The live session `id` of exactly this owner in this space, else undefined. */
export async function findLiveProxySession(knex: Knex, id: string, where: ProxySessionScope): Promise<ProxySessionRow | undefined> {
  return (await knex('credential_proxy_sessions')
    .where({ id, org_id: where.orgId, space_id: where.spaceId, owner_type: where.owner.type, owner_id: where.owner.id })
    .where('expires_at', '>', knex.fn.now())
    .first()) as ProxySessionRow | undefined;
}
