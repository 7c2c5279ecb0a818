import { SpaceMember } from '../../../shared/db/models.ts';
import { defineRoute } from '../../route.ts';
import { listOf, spaceMemberSchema } from '../../schemas.ts';
import { spaceAccess, spaceIdParam, spaceMemberDto } from './_access.ts';

export default defineRoute<unknown, unknown, { spaceId: string }>({
  method: 'get',
  path: '/api/spaces/:spaceId/members',
  operationId: 'listSpaceMembers',
  summary: 'Explicit members of a space',
  tag: 'Spaces',
  auth: 'session',
  context: 'org',
  params: spaceIdParam,
  responses: { 200: { description: 'List', schema: listOf(spaceMemberSchema) } },
  async handler(ctx, { params }) {
    const { space } = await spaceAccess(ctx, params.spaceId, 'spaces:read');
    const rows = await SpaceMember.query(ctx.services.knex).where({ space_id: space.id, org_id: space.org_id }).orderBy('created_at');
    ctx.body = { object: 'list', data: rows.map(spaceMemberDto), hasMore: false };
  },
});
