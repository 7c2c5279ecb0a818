import { defineRoute } from '../../route.ts';
import { REALTIME_DESCRIPTION, type RealtimeQuery, realtimeFrames, realtimeQuery, realtimeResponses, subscribe } from './_stream.ts';

export default defineRoute<unknown, RealtimeQuery>({
  method: 'get',
  path: '/api/realtime/runs',
  operationId: 'streamRuns',
  summary: 'Server-Sent Events of every run in the space',
  description: REALTIME_DESCRIPTION,
  tag: 'Realtime',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  queryCredentials: true,
  confirmsAccess: true, // the stream opens once the access epoch is confirmed (_stream.ts)
  query: realtimeQuery,
  responses: realtimeResponses,
  sseFrames: realtimeFrames,
  async handler(ctx, { query }) {
    await subscribe(ctx, query, {}).open();
  },
});
