import { OrgMember } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { removeOrgMember } from '../../../shared/identity/tenancy.ts';
import { recheckScheduleAccess } from '../../../shared/schedules/access.ts';
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
    const { knex } = ctx.services;
    const self = params.userId === ctx.state.auth!.userId;
    const role = await callerOrgRole(ctx, params.orgId, { admin: !self });
    const target = await OrgMember.query(knex).findOne({ org_id: params.orgId, user_id: params.userId });
    if (!target) throw problem('not_found', 'No such member');
    if (target.role === 'owner') {
      if (!self && role !== 'owner') throw problem('forbidden', 'Only an owner can remove an owner');
      const owners = await OrgMember.query(knex).where({ org_id: params.orgId, role: 'owner' }).resultSize();
      if (owners <= 1) throw problem('last_owner', 'The organization would have no owner left');
    }
    await removeOrgMember(knex, params.orgId, params.userId);
    await recheckScheduleAccess(knex, ctx.services.workflows, params.orgId, params.userId);
    ctx.status = 204;
  },
});
