import { MAX_SINK_EVENTS, applySinkEvents } from '../../../shared/runs/sink.ts';
import { defineRoute } from '../../route.ts';
import { SINK_PROTOCOL } from '../../resources/remote-runs.ts';
import { runIdParam } from '../../resources/runs.ts';

const usage = {
  type: 'object',
  additionalProperties: false,
  required: ['inputTokens', 'outputTokens', 'costUsd'],
  properties: { inputTokens: { type: 'integer', minimum: 0 }, outputTokens: { type: 'integer', minimum: 0 }, costUsd: { type: 'number', minimum: 0 } },
};

const event = {
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'started' } } },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'level', 'message'],
      properties: { type: { const: 'log' }, level: { enum: ['debug', 'info', 'warn', 'error'] }, message: { type: 'string', maxLength: 10000 }, data: {} },
    },
    { type: 'object', additionalProperties: false, required: ['type', 'usage'], properties: { type: { const: 'metric' }, usage } },
    { type: 'object', additionalProperties: false, required: ['type', 'output'], properties: { type: { const: 'result' }, output: {} } },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'error'],
      properties: { type: { const: 'failure' }, error: { type: 'string', minLength: 1, maxLength: 10000 } },
    },
  ],
};

export default defineRoute<{ events: any[] }, unknown, { id: string }>({
  method: 'post',
  path: '/api/runs/:id/sink',
  operationId: 'reportToRunSink',
  summary: "Report a remote run's progress and result to its sink",
  description: SINK_PROTOCOL,
  tag: 'Remote runs',
  auth: 'sink',
  rateLimit: { points: 200, duration: 60, by: 'identity' },
  params: runIdParam,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['events'],
    properties: { events: { type: 'array', minItems: 1, maxItems: MAX_SINK_EVENTS, items: event } },
  },
  responses: {
    200: {
      description: 'The reports were applied in order',
      schema: {
        type: 'object',
        required: ['object', 'runId', 'status', 'accepted'],
        properties: { object: { const: 'sink_ack' }, runId: { type: 'string' }, status: { type: 'string' }, accepted: { type: 'integer' } },
      },
    },
  },
  async handler(ctx, { body }) {
    const run = ctx.state.sinkRun!;
    const ack = await applySinkEvents(ctx.services.knex, ctx.services.workflows, run, body.events);
    ctx.body = { object: 'sink_ack', runId: run.id, ...ack };
  },
});
