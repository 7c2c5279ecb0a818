import { endUserDto, endUserSchema } from '../../../shared/identity/model.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/end-users',
  operationId: 'listEndUsers',
  summary: 'End-users of the space, newest first (cursor pagination)',
  tag: 'End-users',
  auth: 'any',
  context: 'space',
  scope: 'end-users:read',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'Page of end-users', schema: listOf(endUserSchema) } },
  async handler(ctx, { query }) {
    const { org, space } = ctx.state.tenancy!;
    const { rows, hasMore } = await cursorPage(ctx, ctx.services.knex('end_users').where({ org_id: org!.id, space_id: space!.id }), {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map((r) => endUserDto(r as never)), hasMore };
  },
});
