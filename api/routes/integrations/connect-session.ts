import { requestConnectLink } from '../../../shared/integrations/connect-sessions.ts';
import { defineRoute } from '../../route.ts';
import { dateTime } from '../../schemas.ts';
import { connectionOwner } from '../../resources/connections.ts';
import { integrationAuthParams, visibleIntegration } from './_shared.ts';

interface Body {
  scopes?: string[];
  connection_id?: string;
}

export default defineRoute<Body, unknown, { scope: string; name: string; authKey: string }>({
  method: 'post',
  path: '/api/integrations/:scope/:name/auths/:authKey/connect/session',
  operationId: 'createConnectSession',
  summary: 'Create a hosted connect link for an integration auth',
  description:
    'Returns `connect_url` (`{PUBLIC_URL}/api/integrations/connect/start?token=...`), a link to a hosted form generated from ' +
    "the auth's `credentials.schema`, for a person to open in a browser. The link is single use (consumed by the first successful " +
    'connection), valid ten minutes (`expiresAt`), and connects as the caller (its end-user with `Service-User`). `connection_id` ' +
    'names one of your connections of this auth to refresh in place (404 otherwise); `scopes` are recorded on the connection.',
  tag: 'Connections',
  auth: 'any',
  context: 'space',
  scope: 'integrations:connect',
  params: integrationAuthParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      scopes: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 200 }, description: 'Scopes to record on the connection' },
      connection_id: { type: 'string', pattern: '^conn_', description: 'One of your connections of this auth, to refresh in place' },
    },
  },
  responses: {
    201: {
      description: 'The hosted connect link',
      schema: {
        type: 'object',
        required: ['connect_url', 'expiresAt'],
        properties: { connect_url: { type: 'string', format: 'uri' }, expiresAt: dateTime },
      },
    },
  },
  async handler(ctx, { params, body }) {
    const { org, space } = ctx.state.tenancy!;
    const integration = await visibleIntegration(ctx, params.scope, params.name);
    const where = { orgId: org!.id, spaceId: space!.id, owner: connectionOwner(ctx) };
    const link = await requestConnectLink(ctx.services.knex, ctx.services.config.publicUrl, where, integration, params.authKey, {
      scopes: body.scopes,
      connectionId: body.connection_id,
    });
    ctx.status = 201;
    ctx.body = link;
  },
});
