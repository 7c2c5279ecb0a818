import { createOrganization } from '../../../shared/identity/tenancy.ts';
import { sessionAuth } from '../../middleware/authenticate.ts';
import { defineRoute } from '../../route.ts';
import { name } from '../../schemas.ts';
import { orgDto, orgSchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ name: string }>({
  method: 'post',
  path: '/api/orgs',
  operationId: 'createOrganization',
  summary: 'Create an organization; the caller becomes its owner',
  tag: 'Organizations',
  auth: 'session',
  body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name } },
  responses: { 201: { description: 'Created', schema: orgSchema } },
  async handler(ctx, { body }) {
    const { org, defaultSpace } = await createOrganization(ctx.services.knex, body.name.trim(), sessionAuth(ctx).userId);
    ctx.status = 201;
    ctx.body = orgDto({ ...org, default_space_id: defaultSpace.id }, 'owner');
  },
});
