import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { callerOrgRole, orgIdParam } from './_access.ts';
import { orgMemberDto, orgMemberSchema } from '../../../shared/identity/model.ts';
import { type OrgMemberRow, orgMembers } from '../../../shared/identity/members.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }, { orgId: string }>({
  method: 'get',
  path: '/api/orgs/:orgId/members',
  operationId: 'listOrgMembers',
  summary: 'Members of an organization, newest first (cursor pagination)',
  description: "The cursor is a member's `userId`.",
  tag: 'Organizations',
  auth: 'session',
  params: orgIdParam,
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(orgMemberSchema) } },
  async handler(ctx, { params, query }) {
    await callerOrgRole(ctx, params.orgId);
    const members = orgMembers(ctx.services.knex, params.orgId);
    // Keyed by the membership's columns, qualified because of the join.
    const { rows, hasMore } = await cursorPage<OrgMemberRow>(ctx, members, {
      key: 'm.user_id',
      createdAt: 'm.created_at',
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = {
      object: 'list',
      data: rows.map(orgMemberDto),
      hasMore,
    };
  },
});
