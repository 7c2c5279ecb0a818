import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';

import { boundOrgId } from '../../middleware/authenticate.ts';
import { orgDto, orgSchema } from '../../../shared/identity/model.ts';
import { type MemberOrganization, memberOrganizations } from '../../../shared/identity/tenancy.ts';

export default defineRoute({
  method: 'get',
  path: '/api/orgs',
  operationId: 'listOrganizations',
  summary: 'Organizations the caller belongs to',
  description: "With an API key: the key's organization.",
  tag: 'Organizations',
  auth: 'any',
  responses: { 200: { description: 'List', schema: listOf(orgSchema) } },
  async handler(ctx) {
    const auth = ctx.state.auth!;
    const q = memberOrganizations(ctx.services.knex, auth.userId);
    const bound = boundOrgId(auth);
    if (bound) q.where('o.id', bound);
    const rows: MemberOrganization[] = await q;
    ctx.body = {
      object: 'list',
      data: rows.map((r) => orgDto(r, r.role)),
      hasMore: false,
    };
  },
});
