import { ApiKey } from '../../../shared/db/models.ts';
import { apiKeyDto } from '../../../shared/identity/api-keys.ts';
import { defineRoute } from '../../route.ts';
import { apiKeySchema, listOf } from '../../schemas.ts';

export default defineRoute({
  method: 'get',
  path: '/api/api-keys',
  operationId: 'listApiKeys',
  summary: 'Live API keys of the space (never the key itself)',
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:read',
  responses: { 200: { description: 'List', schema: listOf(apiKeySchema) } },
  async handler(ctx) {
    const { space, org } = ctx.state.tenancy!;
    const rows = await ApiKey.query(ctx.services.knex)
      .where({ org_id: org!.id, space_id: space!.id })
      .whereNull('revoked_at')
      .where((w) => w.whereNull('expires_at').orWhere('expires_at', '>', new Date()))
      .orderBy('created_at', 'desc');
    ctx.body = { object: 'list', data: rows.map(apiKeyDto), hasMore: false };
  },
});
