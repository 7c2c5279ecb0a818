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
  query: realtimeQuery,
  responses: realtimeResponses,
  sseFrames: realtimeFrames,
  handler(ctx, { query }) {
    subscribe(ctx, query, {}).open();
  },
});
