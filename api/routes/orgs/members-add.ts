import { OrgMember } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { addOrgMember } from '../../../shared/identity/tenancy.ts';
import { findUserByEmail } from '../../../shared/identity/users.ts';
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
    const { knex } = ctx.services;
    const role = await callerOrgRole(ctx, params.orgId, { admin: true });
    if (body.role === 'owner' && role !== 'owner') throw problem('forbidden', 'Only an owner can add an owner');
    const user = await findUserByEmail(knex, body.email);
    if (!user) throw problem('not_found', { detail: `No account uses ${body.email}`, param: 'email' });
    if (await OrgMember.query(knex).findOne({ org_id: params.orgId, user_id: user.id })) {
      throw problem('already_member', `${user.email} already belongs to this organization`);
    }
    const m = await addOrgMember(knex, params.orgId, user.id, body.role);
    ctx.status = 201;
    ctx.body = orgMemberDto({ ...m, email: user.email, name: user.name });
  },
});
