import { extendRunSink, SINK_TTL } from '../../../shared/runs/sink.ts';
import { defineRoute } from '../../route.ts';
import { SINK_PROTOCOL } from '../../resources/remote-runs.ts';
import { runIdParam } from '../../resources/runs.ts';

export default defineRoute<{ seconds?: number }, unknown, { id: string }>({
  method: 'patch',
  path: '/api/runs/:id/sink/extend',
  operationId: 'extendRunSink',
  summary: "Push back a remote run's sink expiry",
  description: `The expiry becomes now + \`seconds\` unless it is already later \
(default ${SINK_TTL.default}, ${SINK_TTL.min} to ${SINK_TTL.max}).\n\n${SINK_PROTOCOL}`,
  tag: 'Remote runs',
  auth: 'sink',
  rateLimit: { points: 30, duration: 60, by: 'identity' },
  params: runIdParam,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: { seconds: { type: 'integer', minimum: SINK_TTL.min, maximum: SINK_TTL.max, default: SINK_TTL.default } },
  },
  responses: {
    200: {
      description: 'The new expiry',
      schema: {
        type: 'object',
        required: ['object', 'runId', 'expiresAt'],
        properties: { object: { const: 'sink' }, runId: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' } },
      },
    },
  },
  async handler(ctx, { body }) {
    const run = ctx.state.sinkRun!;
    const expiresAt = await extendRunSink(ctx.services.knex, ctx.services.workflows, run, body.seconds ?? SINK_TTL.default);
    ctx.body = { object: 'sink', runId: run.id, expiresAt: expiresAt.toISOString() };
  },
});
