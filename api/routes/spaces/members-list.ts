import type { SpaceMember } from '../../../shared/db/models.ts';
import { spaceMembers } from '../../../shared/identity/members.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { spaceAccess, spaceIdParam } from './_access.ts';
import { spaceMemberDto, spaceMemberSchema } from '../../../shared/identity/model.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }, { spaceId: string }>({
  method: 'get',
  path: '/api/spaces/:spaceId/members',
  operationId: 'listSpaceMembers',
  summary: 'Explicit members of a space, newest first (cursor pagination)',
  description: "The cursor is a member's `userId`.",
  tag: 'Spaces',
  auth: 'session',
  context: 'org',
  params: spaceIdParam,
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(spaceMemberSchema) } },
  async handler(ctx, { params, query }) {
    const { space } = await spaceAccess(ctx, params.spaceId, 'spaces:read');
    const members = spaceMembers(ctx.services.knex, space);
    const { rows, hasMore } = await cursorPage<SpaceMember>(ctx, members, {
      key: 'user_id', // a member has no id of its own
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(spaceMemberDto), hasMore };
  },
});
