// Connections as route slices read them: the caller as a connection owner, and the lookup of one
// of the caller's own connections (anyone else's is 404).
import { problem } from '../../shared/errors.ts';
import { type ConnectionOwner, type ConnectionRow, ownedConnections } from '../../shared/integrations/connections.ts';
import type { AppContext } from '../context.ts';

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
