// `connection_update` (SPEC 6.4, DESIGN.md 7): a connection changed outside a request of its
// owner (a refresh, a refused refresh). One NOTIFY on its own channel names the connection and
// its owner; each API process's LISTEN turns it into `{object:'connection_update', connection}`
// frames for that owner's realtime streams. No credential is in the payload.
import type { Knex } from 'knex';
import type { ConnectionRow } from './connections.ts';

export const CONNECTION_UPDATES_CHANNEL = 'connection_updates';

export interface ConnectionUpdateNotice {
  connection_id: string;
  org_id: string;
  space_id: string;
  owner_type: ConnectionRow['owner_type'];
  owner_id: string;
}

export async function notifyConnectionUpdate(knex: Knex, row: Pick<ConnectionRow, 'id' | 'org_id' | 'space_id' | 'owner_type' | 'owner_id'>): Promise<void> {
  const notice: ConnectionUpdateNotice = {
    connection_id: row.id,
    org_id: row.org_id,
    space_id: row.space_id,
    owner_type: row.owner_type,
    owner_id: row.owner_id,
  };
  await knex.raw('select pg_notify(?, ?)', [CONNECTION_UPDATES_CHANNEL, JSON.stringify(notice)]);
}
