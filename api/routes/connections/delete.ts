import { deleteConnection } from '../../../shared/integrations/disconnect.ts';
import { defineRoute } from '../../route.ts';
import { connectionIdParam, findCallerConnection } from '../../resources/connections.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/connections/:id',
  operationId: 'deleteConnection',
  summary: 'Delete one of your connections and its stored credential',
  description:
    'Schedules that relied on it are disabled with a reason (`disabled_reason`), in the same request: those you created in this ' +
    "space whose agent depends on the connection's integration and for which you have no other usable connection.",
  tag: 'Connections',
  auth: 'any',
  context: 'space',
  scope: 'integrations:disconnect',
  params: connectionIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const row = await findCallerConnection(ctx, params.id);
    await deleteConnection(ctx.services.knex, ctx.services.workflows, row);
    ctx.status = 204;
  },
});
