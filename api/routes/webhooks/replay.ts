import { REPLAY_MAX_EVENTS, replayWebhook } from '../../../shared/webhooks/replay.ts';
import { defineRoute } from '../../route.ts';
import { dateTime } from '../../schemas.ts';
import { webhookFor, webhookIdParam } from '../../resources/webhooks.ts';

interface Body {
  since: string;
  until?: string;
  status?: 'failed';
}

export default defineRoute<Body, unknown, { id: string }>({
  method: 'post',
  path: '/api/webhooks/:id/replay',
  operationId: 'replayWebhook',
  summary: 'Send again every event of a time window that the webhook subscribes to',
  description:
    `Events with \`since <= occurredAt < until\` (until: now by default) of the types, space and agent the webhook subscribes ` +
    `to, oldest first, at most ${REPLAY_MAX_EVENTS} per call: \`truncated\` with \`nextSince\` (the \`since\` of the call that ` +
    `continues) when more matched. \`status: "failed"\` keeps only events whose last delivery to this webhook failed. Each event ` +
    `is sent as one new attempt with its own \`webhook-id\` (the event id), numbered after its recorded attempts and not retried ` +
    `on failure; an event whose delivery to this webhook is still running is left to it (\`alreadyRunning\`), so repeating a ` +
    `replay while the first runs queues nothing twice. A disabled webhook is 409 \`conflict\`.`,
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  params: webhookIdParam,
  body: {
    type: 'object',
    required: ['since'],
    additionalProperties: false,
    properties: {
      since: { ...dateTime, description: 'Start of the window (inclusive)' },
      until: { ...dateTime, description: 'End of the window (exclusive); now by default' },
      status: { enum: ['failed'], description: 'Only events whose last delivery to this webhook failed' },
    },
  },
  responses: {
    202: {
      description: 'Queued',
      schema: {
        type: 'object',
        required: ['object', 'webhookId', 'matched', 'queued', 'alreadyRunning', 'truncated', 'nextSince'],
        properties: {
          object: { const: 'webhook_replay' },
          webhookId: { type: 'string' },
          matched: { type: 'integer', description: `Events of the window replayed by this call (at most ${REPLAY_MAX_EVENTS})` },
          queued: { type: 'integer', description: 'New attempts started' },
          alreadyRunning: { type: 'integer', description: 'Events whose delivery was still running: nothing new queued' },
          truncated: { type: 'boolean' },
          nextSince: { type: ['string', 'null'], format: 'date-time' },
        },
      },
    },
  },
  async handler(ctx, { body, params }) {
    const hook = await webhookFor(ctx, params.id, 'write');
    const span = { since: new Date(body.since), until: body.until ? new Date(body.until) : undefined, failedOnly: body.status === 'failed' };
    const replayed = await replayWebhook(ctx.services.knex, ctx.services.workflows, hook, span);
    ctx.status = 202;
    ctx.body = replayed;
  },
});
