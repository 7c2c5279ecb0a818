import { type OAuthClientRow, permissionScopes, revokeClientGrants } from '../../../../shared/oidc/clients.ts';
import { clientDto, clientSchema } from '../../../../shared/oidc/model.ts';
import { defineRoute } from '../../../route.ts';
import { assertRedirectUris, assertScopesForLevel, clientFields, clientFor, clientIdParam } from './_access.ts';

interface Body {
  name?: string;
  redirect_uris?: string[];
  scopes?: string[];
  allowSignup?: boolean;
}

export default defineRoute<Body, unknown, { id: string }>({
  method: 'patch',
  path: '/api/oauth/clients/:id',
  operationId: 'updateOAuthClient',
  summary: 'Change an OAuth client (merge semantics; level, secret and public cannot change)',
  description:
    'Removing a scope revokes what the client holds (grants, refresh tokens, codes): its users consent again to the narrower ' +
    "set. An instance-level client: an organization owner's session only.",
  tag: 'OAuth clients',
  auth: 'any',
  context: 'org',
  scope: 'oauth-clients:write',
  params: clientIdParam,
  body: { type: 'object', additionalProperties: false, properties: clientFields },
  responses: { 200: { description: 'Updated', schema: clientSchema } },
  async handler(ctx, { body, params }) {
    const client = await clientFor(ctx, params.id, 'write');
    const scopes = body.scopes && permissionScopes(body.scopes);
    if (body.redirect_uris) assertRedirectUris(body.redirect_uris);
    if (scopes) assertScopesForLevel(client.level, scopes);
    const patch: Record<string, unknown> = { updated_at: new Date() };
    if (body.name !== undefined) patch.name = body.name;
    if (body.redirect_uris) patch.redirect_uris = JSON.stringify(body.redirect_uris);
    if (scopes) patch.scopes = JSON.stringify(scopes);
    if (body.allowSignup !== undefined) patch.allow_signup = body.allowSignup;
    const narrowed = scopes !== undefined && client.scopes.some((s) => !scopes.includes(s));
    const row = await ctx.services.knex.transaction(async (trx) => {
      const [updated] = await trx('oauth_clients').where({ id: client.id, org_id: client.org_id }).update(patch).returning('*');
      if (narrowed) await revokeClientGrants(trx, client.client_id);
      return updated as OAuthClientRow;
    });
    ctx.body = clientDto(row);
  },
});
