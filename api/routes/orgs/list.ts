import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';

import { boundOrgId } from '../../middleware/authenticate.ts';
import { orgDto, orgSchema } from '../../../shared/identity/model.ts';

export default defineRoute({
  method: 'get',
  path: '/api/orgs',
  operationId: 'listOrganizations',
  summary: 'Organizations the caller belongs to',
  description: 'With an API key: the key\'s organization.',
  tag: 'Organizations',
  auth: 'any',
  responses: { 200: { description: 'List', schema: listOf(orgSchema) } },
  async handler(ctx) {
    const auth = ctx.state.auth!;
    const q = ctx.services
      .knex('org_members as m')
      .join('organizations as o', 'o.id', 'm.org_id')
      .join('spaces as s', function () {
        this.on('s.org_id', 'o.id').andOnVal('s.kind', 'default');
      })
      .where('m.user_id', auth.userId)
      .select('o.id', 'o.name', 'm.role', 's.id as default_space_id')
      .orderBy('o.created_at');
    const bound = boundOrgId(auth);
    if (bound) q.where('o.id', bound);
    const rows = await q;
    ctx.body = {
      object: 'list',
      data: rows.map((r) => orgDto(r, r.role)),
      hasMore: false,
    };
  },
});
