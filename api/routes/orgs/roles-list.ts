import type { CustomRole } from '../../../shared/db/models.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { callerOrgRole, orgIdParam } from './_access.ts';
import { customRoleDto, customRoleSchema } from '../../../shared/identity/model.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }, { orgId: string }>({
  method: 'get',
  path: '/api/orgs/:orgId/roles',
  operationId: 'listCustomRoles',
  summary: 'Custom space role bundles of the organization, newest first (cursor pagination)',
  tag: 'Organizations',
  auth: 'session',
  params: orgIdParam,
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'List', schema: listOf(customRoleSchema) } },
  async handler(ctx, { params, query }) {
    await callerOrgRole(ctx, params.orgId);
    const { rows, hasMore } = await cursorPage<CustomRole>(ctx, ctx.services.knex('custom_roles').where({ org_id: params.orgId }), {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(customRoleDto), hasMore };
  },
});
