import { credentialDto, credentialSchema } from '../../../shared/models/model.ts';
import type { CredentialRow } from '../../../shared/models/resolve.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/model-provider-credentials',
  operationId: 'listModelProviderCredentials',
  summary: 'Model provider credentials of the organization, newest first (cursor pagination)',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:read',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(credentialSchema) } },
  async handler(ctx, { query }) {
    const q = ctx.services.knex('model_provider_credentials').where({ org_id: ctx.state.tenancy!.org!.id });
    const { rows, hasMore } = await cursorPage<CredentialRow>(ctx, q, {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(credentialDto), hasMore };
  },
});
