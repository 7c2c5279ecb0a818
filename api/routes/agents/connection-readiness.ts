// GET /api/agents/{scope}/{name}/connection-readiness (SPEC 4.4, DESIGN.md 7): which connection
// a launch by the caller's actor would use for each integration dependency, or why none can.
import { problem } from '../../../shared/errors.ts';
import { agentReadiness } from '../../../shared/integrations/readiness.ts';
import { resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { defineRoute } from '../../route.ts';
import { connectionOwner } from '../../resources/connections.ts';
import { agentPathParams, launchVersionQuery } from '../../resources/launch.ts';

const strings = { type: 'array', items: { type: 'string' } } as const;

const readinessSchema = {
  type: 'object',
  required: ['object', 'ready', 'integrations'],
  properties: {
    object: { const: 'connection_readiness' },
    ready: { type: 'boolean', description: 'Every integration dependency has a usable connection: a launch would not be refused for connections' },
    integrations: {
      type: 'array',
      description: 'One entry per `dependencies.integrations` entry of the agent, in manifest order',
      items: {
        type: 'object',
        required: ['packageId', 'auth_key', 'status', 'connection_id', 'candidate_connections', 'required_scopes', 'missing_scopes'],
        properties: {
          packageId: { type: 'string', description: "The integration, '@scope/name'" },
          auth_key: {
            type: ['string', 'null'],
            description:
              "The auth a run uses: `integrations_configuration[id].auth_key`, else the integration's only (or first) auth; null when the " +
              'integration is not visible',
          },
          status: {
            enum: ['ready', 'missing', 'needs_reconnection', 'missing_scopes'],
            description: '`missing`: no connection of that auth (or the integration or the named auth does not exist)',
          },
          connection_id: {
            type: ['string', 'null'],
            description: 'ready: the connection a launch would use (the most recently updated usable one); otherwise the one to reconnect or widen, if any',
          },
          candidate_connections: {
            type: 'array',
            description: "The actor's connections of that integration and auth, most recently updated first",
            items: {
              type: 'object',
              required: ['id', 'label', 'account_id', 'owned_by_actor', 'needs_reconnection'],
              properties: {
                id: { type: 'string' },
                label: { type: 'string' },
                account_id: { type: 'string' },
                owned_by_actor: { type: 'boolean' },
                needs_reconnection: { type: 'boolean' },
              },
            },
          },
          required_scopes: { ...strings, description: '`integrations_configuration[id].scopes`' },
          missing_scopes: { ...strings, description: 'Required scopes the connection lacks (checked for `oauth2` auths only)' },
        },
      },
    },
  },
};

export default defineRoute<unknown, { version?: string }, { scope: string; name: string }>({
  method: 'get',
  path: '/api/agents/:scope/:name/connection-readiness',
  operationId: 'getConnectionReadiness',
  summary: "Whether the caller's connections are ready for the agent's integrations",
  description:
    "For the caller's actor (the end-user of `Service-User`, else the person): per integration dependency, the auth used, the " +
    "connection a launch would use and the candidates. A connection is usable when it is the actor's, of that auth, not `needs_reconnection`, " +
    'and (for `oauth2` auths) holds the required scopes. 404 for an agent the caller cannot see.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'agents:read',
  params: agentPathParams,
  query: launchVersionQuery,
  responses: { 200: { description: 'The readiness', schema: readinessSchema } },
  async handler(ctx, { params, query }) {
    const { org, space } = ctx.state.tenancy!;
    const { knex } = ctx.services;
    const agent = await resolveAgent(knex, org!.id, space!.id, params.scope, params.name, query.version);
    if (!agent) throw problem('not_found', `No agent ${params.scope}/${params.name} (or it has no published version)`);
    const integrations = await agentReadiness(knex, { orgId: org!.id, spaceId: space!.id, owner: connectionOwner(ctx) }, agent.manifest);
    ctx.body = {
      object: 'connection_readiness',
      ready: integrations.every((r) => r.status === 'ready'),
      integrations: integrations.map((r) => ({
        packageId: r.packageId,
        auth_key: r.auth_key,
        status: r.status,
        connection_id: r.connection_id,
        candidate_connections: r.candidate_connections,
        required_scopes: r.required_scopes,
        missing_scopes: r.missing_scopes,
      })),
    };
  },
});
