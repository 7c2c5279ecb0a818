import { Space } from '../../../shared/db/models.ts';
import { isOrgAdmin } from '../../../shared/identity/tenancy.ts';
import { spaceDto } from '../../../shared/identity/tenancy.ts';
import { defineRoute } from '../../route.ts';
import { listOf, spaceSchema } from '../../schemas.ts';

export default defineRoute({
  method: 'get',
  path: '/api/spaces',
  operationId: 'listSpaces',
  summary: 'Spaces the caller can enter in the organization',
  description: 'Organization owners and admins see every shared space; others the spaces where they hold a role. Everyone sees their own personal space. An API key sees its own space.',
  tag: 'Spaces',
  auth: 'any',
  context: 'org',
  responses: { 200: { description: 'List', schema: listOf(spaceSchema) } },
  async handler(ctx) {
    const auth = ctx.state.auth!;
    const { org, orgRole } = ctx.state.tenancy!;
    const q = Space.query(ctx.services.knex).where('org_id', org!.id).orderBy('created_at');
    if (auth.kind === 'api_key') {
      q.where('id', auth.key.space_id);
    } else {
      q.where((w) => {
        w.where({ kind: 'personal', owner_user_id: auth.userId });
        if (isOrgAdmin(orgRole)) w.orWhereNot('kind', 'personal');
        else w.orWhereIn('id', ctx.services.knex('space_members').select('space_id').where({ user_id: auth.userId }));
      });
    }
    ctx.body = { object: 'list', data: (await q).map(spaceDto), hasMore: false };
  },
});
