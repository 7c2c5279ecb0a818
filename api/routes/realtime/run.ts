import { runDto } from '../../../shared/runs/model.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleRun, runIdParam } from '../../resources/runs.ts';
import { REALTIME_DESCRIPTION, type RealtimeQuery, realtimeFrames, realtimeQuery, realtimeResponses, subscribe } from './_stream.ts';

export default defineRoute<unknown, RealtimeQuery, { id: string }>({
  method: 'get',
  path: '/api/realtime/runs/:id',
  operationId: 'streamRun',
  summary: 'Server-Sent Events of one run; the first frame is a run_update snapshot',
  description:
    `The first frame is a \`run_update\` snapshot of the run (when run_update is among the channels), then \`ping\`. A run the ` +
    `caller cannot read is 404 before the stream starts. ${REALTIME_DESCRIPTION}`,
  tag: 'Realtime',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  queryCredentials: true,
  confirmsAccess: true, // the stream opens once the access epoch is confirmed (_stream.ts)
  params: runIdParam,
  query: realtimeQuery,
  responses: realtimeResponses,
  sseFrames: realtimeFrames,
  async handler(ctx, { params, query }) {
    // Subscribed before the snapshot is read, so nothing published in between is lost.
    const sub = subscribe(ctx, query, { runId: params.id });
    let run: Awaited<ReturnType<typeof findVisibleRun>>;
    try {
      run = await findVisibleRun(ctx, params.id);
    } catch (err) {
      sub.discard();
      throw err;
    }
    await sub.open(sub.channels.has('run_update') ? [['run_update', JSON.stringify(runDto(run))]] : []);
  },
});
