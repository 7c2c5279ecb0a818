import { clientDto, clientSchema } from '../../../../shared/oidc/model.ts';
import { defineRoute } from '../../../route.ts';
import { clientFor, clientIdParam } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/oauth/clients/:id',
  operationId: 'getOAuthClient',
  summary: 'Read an OAuth client (never its secret)',
  tag: 'OAuth clients',
  auth: 'any',
  context: 'org',
  scope: 'oauth-clients:read',
  params: clientIdParam,
  responses: { 200: { description: 'The client', schema: clientSchema } },
  async handler(ctx, { params }) {
    ctx.body = clientDto(await clientFor(ctx, params.id, 'read'));
  },
});
