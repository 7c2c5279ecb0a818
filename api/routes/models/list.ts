import { modelDto, type ModelRow } from '../../../shared/models/resolve.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { modelSchema } from './_shared.ts';

export default defineRoute({
  method: 'get',
  path: '/api/models',
  operationId: 'listModels',
  summary: 'Models configured for the organization',
  description: 'When none is the default, runs use the instance default (MODEL_* settings).',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:read',
  responses: { 200: { description: 'List', schema: listOf(modelSchema) } },
  async handler(ctx) {
    const rows = await ctx.services.knex<ModelRow>('models').where({ org_id: ctx.state.tenancy!.org!.id }).orderBy('created_at');
    ctx.body = { object: 'list', data: rows.map(modelDto), hasMore: false };
  },
});
