import { addOrgMemberByEmail } from '../../../shared/identity/members.ts';
import type { OrgRole } from '../../../shared/permissions.ts';
import { defineRoute } from '../../route.ts';
import { email, orgRole } from '../../schemas.ts';
import { callerOrgRole, orgIdParam } from './_access.ts';
import { orgMemberDto, orgMemberSchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ email: string; role: OrgRole }, unknown, { orgId: string }>({
  method: 'post',
  path: '/api/orgs/:orgId/members',
  operationId: 'addOrgMember',
  summary: 'Add an existing user to the organization',
  description: 'Owners and admins only; only an owner adds an owner. The new member gets the `member` role in the default space and a personal space.',
  tag: 'Organizations',
  auth: 'session',
  params: orgIdParam,
  body: { type: 'object', additionalProperties: false, required: ['email', 'role'], properties: { email, role: orgRole } },
  responses: { 201: { description: 'Added', schema: orgMemberSchema } },
  async handler(ctx, { body, params }) {
    const role = await callerOrgRole(ctx, params.orgId, { admin: true });
    const m = await addOrgMemberByEmail(ctx.services.knex, params.orgId, role, body.email, body.role);
    ctx.status = 201;
    ctx.body = orgMemberDto(m);
  },
});
