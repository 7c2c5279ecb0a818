import { connect, authOf } from '../../../shared/integrations/connect.ts';
import { connectionDto } from '../../../shared/integrations/connections.ts';
import { defineRoute } from '../../route.ts';
import { connectionSchema } from '../../../shared/integrations/connections.ts';
import { connectionOwner } from '../../resources/connections.ts';
import { integrationAuthParams, visibleIntegration } from './_shared.ts';

interface Body {
  credentials: Record<string, unknown>;
  connection_id?: string;
}

export default defineRoute<Body, unknown, { scope: string; name: string; authKey: string }>({
  method: 'post',
  path: '/api/integrations/:scope/:name/auths/:authKey/connect/fields',
  operationId: 'connectWithFields',
  summary: 'Connect an integration auth with submitted fields',
  description:
    "`credentials` must match the auth's `credentials.schema` (400 `validation_failed` naming `credentials.<field>`). Without " +
    '`connect.login` the fields are the credential; with it the service sends the one login request at once (no redirect followed, ' +
    'egress policy applied) and stores only the declared `outputs`, never the password; a refused login is 500 `internal_error` ' +
    "naming the target's answer. `connection_id` refreshes one of your connections in place (200, same id, `needs_reconnection` " +
    'false); otherwise 201 with a new connection. Each attempt is a `connectLogin` workflow whose history holds no field value.',
  tag: 'Connections',
  auth: 'any',
  context: 'space',
  scope: 'integrations:connect',
  params: integrationAuthParams,
  body: {
    type: 'object',
    required: ['credentials'],
    additionalProperties: false,
    properties: {
      credentials: { type: 'object', description: "The auth's fields (its `credentials.schema`)" },
      connection_id: { type: 'string', pattern: '^conn_', description: 'One of your connections of this auth, to refresh in place' },
    },
  },
  responses: {
    200: { description: 'The connection, refreshed', schema: connectionSchema },
    201: { description: 'The new connection', schema: connectionSchema },
  },
  async handler(ctx, { params, body }) {
    const { org, space } = ctx.state.tenancy!;
    const integration = await visibleIntegration(ctx, params.scope, params.name);
    const { connection, created } = await connect(ctx.services, {
      orgId: org!.id,
      spaceId: space!.id,
      owner: connectionOwner(ctx),
      integration,
      auth: authOf(integration, params.authKey),
      credentials: body.credentials,
      connectionId: body.connection_id,
    });
    ctx.status = created ? 201 : 200;
    ctx.body = connectionDto(connection);
  },
});
