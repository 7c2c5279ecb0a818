import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/models/:id',
  operationId: 'deleteModel',
  summary: 'Remove a model',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:delete',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const n = await ctx.services.knex('models').where({ id: params.id, org_id: ctx.state.tenancy!.org!.id }).delete();
    if (!n) throw problem('not_found', 'No such model');
    ctx.status = 204;
  },
});
