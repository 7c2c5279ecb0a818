import { revokeClientGrants } from '../../../../shared/oidc/clients.ts';
import { defineRoute } from '../../../route.ts';
import { clientFor, clientIdParam } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/oauth/clients/:id',
  operationId: 'deleteOAuthClient',
  summary: 'Delete an OAuth client and revoke everything it holds',
  description:
    'Its grants, authorization codes, refresh tokens and device codes go with it; JWT access tokens already issued stay valid ' +
    "until they expire (one hour by default). An instance-level client: an organization owner's session only.",
  tag: 'OAuth clients',
  auth: 'any',
  context: 'org',
  scope: 'oauth-clients:delete',
  params: clientIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const client = await clientFor(ctx, params.id, 'write');
    await ctx.services.knex.transaction(async (trx) => {
      await trx('oauth_clients').where({ id: client.id, org_id: client.org_id }).delete();
      await revokeClientGrants(trx, client.client_id);
    });
    ctx.status = 204;
  },
});
