import { problem } from '../../../shared/errors.ts';
import { findVisiblePackage } from '../../../shared/packages/resolve-agent.ts';
import { splitName } from '../../../shared/packages/types.ts';
import { defineRoute } from '../../route.ts';
import { REALTIME_DESCRIPTION, type RealtimeQuery, realtimeFrames, realtimeQuery, realtimeResponses, subscribe } from './_stream.ts';

export default defineRoute<unknown, RealtimeQuery, { packageId: string }>({
  method: 'get',
  path: '/api/realtime/agents/:packageId/runs',
  operationId: 'streamAgentRuns',
  summary: 'Server-Sent Events of every run of one agent',
  description:
    `\`packageId\` is \`@scope/name\` URL-encoded as one path segment (\`%40acme%2Fsummarizer\`). An agent the space cannot see ` +
    `is 404. ${REALTIME_DESCRIPTION}`,
  tag: 'Realtime',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  queryCredentials: true,
  confirmsAccess: true, // the stream opens once the access epoch is confirmed (_stream.ts)
  params: {
    type: 'object',
    required: ['packageId'],
    // The example tells a client (and a generator) that the value carries a `/`, sent as `%2F`.
    properties: {
      packageId: {
        type: 'string',
        pattern: '^@[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$',
        description: '@scope/name, URL-encoded',
        examples: ['@acme/summarizer'],
      },
    },
  },
  query: realtimeQuery,
  responses: realtimeResponses,
  sseFrames: realtimeFrames,
  async handler(ctx, { params, query }) {
    const { org, space } = ctx.state.tenancy!;
    const { scope, name } = splitName(params.packageId)!;
    const pkg = await findVisiblePackage(ctx.services.knex, org!.id, space!.id, scope, name, 'agent');
    if (!pkg) throw problem('not_found', 'No such agent');
    await subscribe(ctx, query, { packageId: pkg.id }).open();
  },
});
