import { defineRoute } from '../../route.ts';
import { connectionIdParam, findCallerConnection } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/connections/:id',
  operationId: 'deleteConnection',
  summary: 'Delete one of your connections and its stored credential',
  description: 'Schedules whose runs relied on it are disabled with a reason.',
  tag: 'Connections',
  auth: 'any',
  context: 'space',
  scope: 'integrations:disconnect',
  params: connectionIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const row = await findCallerConnection(ctx, params.id);
    await ctx.services.knex('connections').where({ id: row.id, org_id: row.org_id }).delete();
    ctx.status = 204;
  },
});
