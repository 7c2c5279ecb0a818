import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { callerOrgRole, orgIdParam } from './_access.ts';

export const orgMemberSchema = {
  type: 'object',
  required: ['object', 'userId', 'email', 'name', 'role'],
  properties: {
    object: { const: 'org_member' },
    userId: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { enum: ['owner', 'admin', 'member'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
};

export default defineRoute<unknown, unknown, { orgId: string }>({
  method: 'get',
  path: '/api/orgs/:orgId/members',
  operationId: 'listOrgMembers',
  summary: 'Members of an organization',
  tag: 'Organizations',
  auth: 'session',
  params: orgIdParam,
  responses: { 200: { description: 'List', schema: listOf(orgMemberSchema) } },
  async handler(ctx, { params }) {
    await callerOrgRole(ctx, params.orgId);
    const rows = await ctx.services
      .knex('org_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.org_id', params.orgId)
      .select('u.id', 'u.email', 'u.name', 'm.role', 'm.created_at')
      .orderBy('m.created_at');
    ctx.body = {
      object: 'list',
      data: rows.map((r) => ({ object: 'org_member', userId: r.id, email: r.email, name: r.name, role: r.role, createdAt: r.created_at.toISOString() })),
      hasMore: false,
    };
  },
});
