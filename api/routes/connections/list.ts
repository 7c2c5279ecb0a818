import { connectionDto, type ConnectionRow, connectionSchema } from '../../../shared/integrations/connections.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { callerConnections } from '../../resources/connections.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/connections',
  operationId: 'listConnections',
  summary: "The caller's own connections in the space, newest first (cursor pagination)",
  description:
    "A person sees the connections it made; an API key acting for an end-user (`Service-User`) sees that end-user's. Credentials are never returned.",
  tag: 'Connections',
  auth: 'any',
  context: 'space',
  scope: 'integrations:read',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'Page of connections', schema: listOf(connectionSchema) } },
  async handler(ctx, { query }) {
    const { rows, hasMore } = await cursorPage<ConnectionRow>(ctx, callerConnections(ctx), {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(connectionDto), hasMore };
  },
});
