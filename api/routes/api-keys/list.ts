import type { ApiKey } from '../../../shared/db/models.ts';

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
    const live = ctx.services
      .knex('api_keys')
      .where({ org_id: org!.id, space_id: space!.id })
      .whereNull('revoked_at')
      .where((w) => w.whereNull('expires_at').orWhere('expires_at', '>', new Date()));
    const { rows, hasMore } = await cursorPage<ApiKey>(ctx, live, { limit: limitFrom(query.limit, 20, 100), startingAfter: query.startingAfter, endingBefore: query.endingBefore });
    ctx.body = { object: 'list', data: rows.map(apiKeyDto), hasMore };
  },
});
