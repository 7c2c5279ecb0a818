import { type ProxyRow, proxyDto, proxySchema } from '../../../shared/models/model.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/proxies',
  operationId: 'listProxies',
  summary: 'Outbound proxies of the organization, newest first (cursor pagination)',
  tag: 'Proxies',
  auth: 'any',
  context: 'org',
  scope: 'proxies:read',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(proxySchema) } },
  async handler(ctx, { query }) {
    const { rows, hasMore } = await cursorPage<ProxyRow>(ctx, ctx.services.knex('proxies').where({ org_id: ctx.state.tenancy!.org!.id }), {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(proxyDto), hasMore };
  },
});
