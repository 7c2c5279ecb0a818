import type { ApiKey } from '../../../shared/db/models.ts';
import { liveApiKeys } from '../../../shared/identity/api-keys.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { apiKeyDto, apiKeySchema } from '../../../shared/identity/model.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/api-keys',
  operationId: 'listApiKeys',
  summary: 'Live API keys of the space (never the key itself), newest first (cursor pagination)',
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:read',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(apiKeySchema) } },
  async handler(ctx, { query }) {
    const { space, org } = ctx.state.tenancy!;
    const live = liveApiKeys(ctx.services.knex, org!.id, space!.id);
    const { rows, hasMore } = await cursorPage<ApiKey>(ctx, live, {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(apiKeyDto), hasMore };
  },
});
