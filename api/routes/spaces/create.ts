import { Space } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { isOrgAdmin } from '../../../shared/identity/tenancy.ts';
import { defineRoute } from '../../route.ts';
import { name } from '../../schemas.ts';
import { spaceDto, spaceSchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ name: string }>({
  method: 'post',
  path: '/api/spaces',
  operationId: 'createSpace',
  summary: 'Create a team space',
  description: 'Organization owners and admins only; they act as `admin` in every team space.',
  tag: 'Spaces',
  auth: 'session',
  context: 'org',
  body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name } },
  responses: { 201: { description: 'Created', schema: spaceSchema } },
  async handler(ctx, { body }) {
    const { org, orgRole, viewAs } = ctx.state.tenancy!;
    if (!isOrgAdmin(orgRole)) throw problem('forbidden', 'Only organization owners and admins create spaces');
    // A previewed space role belongs to an organization member, who creates no spaces (SPEC 5.2).
    if (viewAs)
      throw problem('forbidden', {
        detail: `Previewing the ${viewAs} role (X-View-As): only organization owners and admins create spaces`,
        param: 'X-View-As',
      });
    const space = await Space.query(ctx.services.knex).insertAndFetch({ id: newId('spc'), org_id: org!.id, name: body.name.trim(), kind: 'team' });
    ctx.status = 201;
    ctx.body = spaceDto(space);
  },
});
