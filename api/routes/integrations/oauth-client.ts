import { problem } from '../../../shared/errors.ts';
import { isOrgAdmin } from '../../../shared/identity/tenancy.ts';
import { authOf } from '../../../shared/integrations/connect.ts';
import { putOAuthClient } from '../../../shared/integrations/oauth2.ts';
import { defineRoute } from '../../route.ts';
import { integrationAuthParams, visibleIntegration } from './_shared.ts';

interface Body {
  client_id: string;
  client_secret: string;
}

const oauthClientSchema = {
  type: 'object',
  required: ['object', 'integration_package_id', 'auth_key', 'client_id', 'updatedAt'],
  properties: {
    object: { const: 'integration_oauth_client' },
    integration_package_id: { type: 'string' },
    auth_key: { type: 'string' },
    client_id: { type: 'string' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export default defineRoute<Body, unknown, { scope: string; name: string; authKey: string }>({
  method: 'put',
  path: '/api/integrations/:scope/:name/auths/:authKey/oauth-client',
  operationId: 'putIntegrationOAuthClient',
  summary: "Store the organization's OAuth 2 client for an integration auth",
  description:
    "For an auth with `type: 'oauth2'`: the client registered at the provider, used by every hosted connect link of the organization for this auth. " +
    'The secret is stored encrypted and never returned. 201 the first time, 200 when it replaces the stored client. ' +
    "Register `{PUBLIC_URL}/api/integrations/connect/callback` as the client's redirect URI at the provider.",
  tag: 'Connections',
  auth: 'any',
  context: 'space',
  scope: 'integrations:write',
  params: integrationAuthParams,
  body: {
    type: 'object',
    required: ['client_id', 'client_secret'],
    additionalProperties: false,
    properties: {
      client_id: { type: 'string', minLength: 1, maxLength: 512 },
      client_secret: { type: 'string', minLength: 1, maxLength: 4096, writeOnly: true },
    },
  },
  responses: {
    200: { description: 'The stored client replaced (no secret)', schema: oauthClientSchema },
    201: { description: 'The client stored (no secret)', schema: oauthClientSchema },
  },
  async handler(ctx, { params, body }) {
    const { org, orgRole, space } = ctx.state.tenancy!;
    const integration = await visibleIntegration(ctx, params.scope, params.name);
    // The client serves every space that sees the integration: its home space or the organization decides.
    if (integration.pkg.home_space_id !== space!.id && !isOrgAdmin(orgRole)) {
      throw problem('forbidden', "Only the integration's home space, or an organization owner or admin, can set its OAuth client");
    }
    const auth = authOf(integration, params.authKey);
    if (auth.connect !== 'oauth2' || !auth.oauth2) {
      throw problem('invalid_request', { detail: `The auth "${auth.key}" is not an OAuth 2 auth with oauth2 settings`, param: 'authKey' });
    }
    const { created, updatedAt } = await putOAuthClient(
      ctx.services.knex,
      ctx.services.config.secretsKey,
      { orgId: org!.id, integrationId: integration.id, authKey: auth.key },
      { clientId: body.client_id, clientSecret: body.client_secret },
    );
    ctx.status = created ? 201 : 200;
    ctx.body = {
      object: 'integration_oauth_client',
      integration_package_id: integration.id,
      auth_key: auth.key,
      client_id: body.client_id,
      updatedAt: new Date(updatedAt).toISOString(),
    };
  },
});
