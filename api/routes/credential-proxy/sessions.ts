import { createProxySession } from '../../../shared/integrations/proxy-sessions.ts';
import { defineRoute } from '../../route.ts';
import { dateTime } from '../../schemas.ts';
import { connectionOwner } from '../../resources/connections.ts';

export default defineRoute({
  method: 'post',
  path: '/api/credential-proxy/sessions',
  operationId: 'createCredentialProxySession',
  summary: 'Open a credential-proxy session',
  description:
    'A `cps_` session to send as `X-Session-Id` on `/api/credential-proxy/proxy`, valid `CREDENTIAL_PROXY_LIMITS.session_ttl_seconds`. ' +
    "It belongs to the caller: the end-user of `Service-User` when sent, else the person (an API key's creator); the proxy uses " +
    "that owner's connections only, and refuses the session to anyone else (403 `invalid_proxy_session`).",
  tag: 'Credential proxy',
  auth: 'any',
  context: 'space',
  scope: 'credential-proxy:call',
  body: { type: 'object', additionalProperties: false, properties: {} },
  responses: {
    201: {
      description: 'The session',
      schema: {
        type: 'object',
        required: ['object', 'id', 'expiresAt'],
        properties: { object: { const: 'credential_proxy_session' }, id: { type: 'string', pattern: '^cps_' }, expiresAt: dateTime },
      },
    },
  },
  async handler(ctx) {
    const { org, space } = ctx.state.tenancy!;
    const ttl = ctx.services.config.credentialProxyLimits.session_ttl_seconds;
    const row = await createProxySession(ctx.services.knex, { orgId: org!.id, spaceId: space!.id, owner: connectionOwner(ctx) }, ttl);
    ctx.status = 201;
    ctx.body = { object: 'credential_proxy_session', id: row.id, expiresAt: row.expires_at.toISOString() };
  },
});
