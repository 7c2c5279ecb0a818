import { CustomRole } from '../../../shared/db/models.ts';
import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { ORG_LEVEL_SCOPES, type Scope } from '../../../shared/permissions.ts';
import { defineRoute } from '../../route.ts';
import { name, scope } from '../../schemas.ts';
import { callerOrgRole, orgIdParam } from './_access.ts';
import { customRoleDto, customRoleSchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ name: string; scopes: Scope[] }, unknown, { orgId: string }>({
  method: 'post',
  path: '/api/orgs/:orgId/roles',
  operationId: 'createCustomRole',
  summary: 'Create a custom space role bundle',
  description: 'A named set of space-level scopes that space members can be given instead of a preset role.',
  tag: 'Organizations',
  auth: 'session',
  params: orgIdParam,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'scopes'],
    properties: { name, scopes: { type: 'array', items: scope, minItems: 1, uniqueItems: true } },
  },
  responses: { 201: { description: 'Created', schema: customRoleSchema } },
  async handler(ctx, { body, params }) {
    await callerOrgRole(ctx, params.orgId, { admin: true });
    const orgLevel = body.scopes.filter((s) => ORG_LEVEL_SCOPES.has(s));
    if (orgLevel.length) {
      throw problem('validation_failed', {
        detail: `${orgLevel[0]} is an organization-level scope and cannot be part of a space role`,
        errors: orgLevel.map((s) => ({ field: 'scopes', code: 'invalid_value', message: `${s} is organization-level` })),
      });
    }
    try {
      const role = await CustomRole.query(ctx.services.knex).insertAndFetch({ id: newId('role'), org_id: params.orgId, name: body.name, scopes: body.scopes });
      ctx.status = 201;
      ctx.body = customRoleDto(role);
    } catch (err) {
      if (isUniqueViolation(err)) throw problem('conflict', { detail: `A role named "${body.name}" exists`, param: 'name' });
      throw err;
    }
  },
});
