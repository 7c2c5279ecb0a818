// What the connection routes share: the caller as a connection owner, the wire schema, and
// the lookup of one of the caller's own connections (anyone else's is 404).
import { problem } from '../../../shared/errors.ts';
import { type ConnectionOwner, type ConnectionRow, ownedConnections } from '../../../shared/integrations/connections.ts';
import type { AppContext } from '../../context.ts';
import { dateTime } from '../../schemas.ts';

/** The actor a request connects as: its impersonated end-user, else its person (a key's creator). */
export function connectionOwner(ctx: AppContext): ConnectionOwner {
  const { endUserId } = ctx.state.tenancy!;
  return endUserId ? { type: 'end_user', id: endUserId } : { type: 'user', id: ctx.state.auth!.userId };
}

/** The caller's connections in its space. */
export function callerConnections(ctx: AppContext) {
  const { org, space } = ctx.state.tenancy!;
  return ownedConnections(ctx.services.knex, { orgId: org!.id, spaceId: space!.id, owner: connectionOwner(ctx) });
}

export async function findCallerConnection(ctx: AppContext, id: string): Promise<ConnectionRow> {
  const row = (await callerConnections(ctx).where({ id }).first()) as ConnectionRow | undefined;
  if (!row) throw problem('not_found', 'No such connection');
  return row;
}

export const connectionIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;

export const connectionSchema = {
  type: 'object',
  required: ['object', 'id', 'integration_package_id', 'auth_key', 'account_id', 'label', 'needs_reconnection', 'scopes', 'createdAt', 'updatedAt'],
  properties: {
    object: { const: 'connection' },
    id: { type: 'string', pattern: '^conn_' },
    integration_package_id: { type: 'string', description: "The integration, '@scope/name'" },
    auth_key: { type: 'string' },
    account_id: { type: 'string', description: '`default` when the login carries no identity' },
    label: { type: 'string' },
    needs_reconnection: { type: 'boolean', description: 'The credential stopped working; connect again with `connection_id` to refresh it in place' },
    scopes: { type: 'array', items: { type: 'string' } },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};
