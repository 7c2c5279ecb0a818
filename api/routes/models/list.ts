import { modelDto, modelSchema } from '../../../shared/models/model.ts';
import type { ModelRow } from '../../../shared/models/resolve.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/models',
  operationId: 'listModels',
  summary: 'Models configured for the organization, newest first (cursor pagination)',
  description: 'When none is the default, runs use the instance default (MODEL_* settings).',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:read',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(modelSchema) } },
  async handler(ctx, { query }) {
    const { rows, hasMore } = await cursorPage<ModelRow>(ctx, ctx.services.knex('models').where({ org_id: ctx.state.tenancy!.org!.id }), {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(modelDto), hasMore };
  },
});
