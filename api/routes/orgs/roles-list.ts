import { CustomRole } from '../../../shared/db/models.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { callerOrgRole, orgIdParam } from './_access.ts';
import { customRoleDto, customRoleSchema } from './roles-create.ts';

export default defineRoute<unknown, unknown, { orgId: string }>({
  method: 'get',
  path: '/api/orgs/:orgId/roles',
  operationId: 'listCustomRoles',
  summary: 'Custom space role bundles of the organization',
  tag: 'Organizations',
  auth: 'session',
  params: orgIdParam,
  responses: { 200: { description: 'List', schema: listOf(customRoleSchema) } },
  async handler(ctx, { params }) {
    await callerOrgRole(ctx, params.orgId);
    const roles = await CustomRole.query(ctx.services.knex).where({ org_id: params.orgId }).orderBy('created_at');
    ctx.body = { object: 'list', data: roles.map(customRoleDto), hasMore: false };
  },
});
