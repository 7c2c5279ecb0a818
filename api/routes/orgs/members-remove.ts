import { removeOrgMemberAs } from '../../../shared/identity/members.ts';
import { defineRoute } from '../../route.ts';
import { callerOrgRole } from './_access.ts';

export default defineRoute<unknown, unknown, { orgId: string; userId: string }>({
  method: 'delete',
  path: '/api/orgs/:orgId/members/:userId',
  operationId: 'removeOrgMember',
  summary: 'Remove a member; their API keys in the organization are revoked',
  description: 'Owners and admins remove others (only an owner removes an owner); anyone may leave. The last owner stays.',
  tag: 'Organizations',
  auth: 'session',
  params: {
    type: 'object',
    required: ['orgId', 'userId'],
    properties: { orgId: { type: 'string', format: 'uuid' }, userId: { type: 'string', minLength: 1 } },
  },
  responses: { 204: { description: 'Removed' } },
  async handler(ctx, { params }) {
    const self = params.userId === ctx.state.auth!.userId;
    const role = await callerOrgRole(ctx, params.orgId, { admin: !self });
    await removeOrgMemberAs(ctx.services.knex, ctx.services.workflows, { orgId: params.orgId, userId: ctx.state.auth!.userId, role }, params.userId);
    ctx.status = 204;
  },
});
