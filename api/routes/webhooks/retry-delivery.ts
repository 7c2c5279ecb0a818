import { retryDelivery } from '../../../shared/webhooks/replay.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor } from '../../resources/webhooks.ts';

export default defineRoute<unknown, unknown, { id: string; deliveryId: string }>({
  method: 'post',
  path: '/api/webhooks/:id/deliveries/:deliveryId/retry',
  operationId: 'retryWebhookDelivery',
  summary: "Send a delivery's event again now (one new attempt)",
  description:
    'The event is signed again and sent with the same `webhook-id` (the event id) as one new attempt, numbered after the last ' +
    'recorded one (`webhook-attempt`), listed in the deliveries once it ends. A single attempt: it is not retried on failure. ' +
    "If the event's delivery to this webhook is still running (its retry ladder waiting), that delivery attempts at once instead " +
    '(`running: true`): never two at a time. A disabled webhook is 409 `conflict` (except for `test.ping`).',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  params: {
    type: 'object',
    required: ['id', 'deliveryId'],
    properties: { id: { type: 'string', minLength: 1 }, deliveryId: { type: 'string', minLength: 1 } },
  },
  responses: {
    202: {
      description: 'Queued',
      schema: {
        type: 'object',
        required: ['object', 'webhookId', 'eventId', 'attempt', 'running'],
        properties: {
          object: { const: 'webhook_delivery_retry' },
          webhookId: { type: 'string' },
          eventId: { type: 'string', description: 'The `webhook-id` of the resend' },
          attempt: { type: ['integer', 'null'], description: 'The number of the new attempt; null when a running delivery was asked to attempt now' },
          running: { type: 'boolean', description: 'A delivery of this event to this webhook was running: it attempts now, nothing new queued' },
        },
      },
    },
  },
  async handler(ctx, { params }) {
    const hook = await webhookFor(ctx, params.id, 'write');
    const retried = await retryDelivery(ctx.services.knex, ctx.services.workflows, hook, params.deliveryId);
    ctx.status = 202;
    ctx.body = retried;
  },
});
