import { connectionDto, connectionSchema } from '../../../shared/integrations/connections.ts';
import { defineRoute } from '../../route.ts';
import { connectionIdParam, findCallerConnection } from '../../resources/connections.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/connections/:id',
  operationId: 'getConnection',
  summary: 'Read one of your connections (never its credential)',
  tag: 'Connections',
  auth: 'any',
  context: 'space',
  scope: 'integrations:read',
  params: connectionIdParam,
  responses: { 200: { description: 'The connection', schema: connectionSchema } },
  async handler(ctx, { params }) {
    ctx.body = connectionDto(await findCallerConnection(ctx, params.id));
  },
});
