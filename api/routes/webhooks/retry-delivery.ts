import { problem } from '../../../shared/errors.ts';
import { nextAttempts, retryDeliveryNow } from '../../../shared/webhooks/replay.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string; deliveryId: string }>({
  method: 'post',
  path: '/api/webhooks/:id/deliveries/:deliveryId/retry',
  operationId: 'retryWebhookDelivery',
  summary: "Send a delivery's event again now (one new attempt)",
  description:
    "The event is signed again and sent with the same `webhook-id` (the event id) as one new attempt, numbered after the last recorded one (`webhook-attempt`), listed in the deliveries once it ends. A single attempt: it is not retried on failure. If the event's delivery to this webhook is still running (its retry ladder waiting), that delivery attempts at once instead (`running: true`): never two at a time. A disabled webhook is 409 `conflict` (except for `test.ping`).",
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
    const { knex, workflows } = ctx.services;
    const delivery = await knex('webhook_deliveries').where({ id: params.deliveryId, webhook_id: hook.id }).first();
    if (!delivery) throw problem('not_found', 'No such delivery of this webhook');
    if (!hook.enabled && delivery.event_type !== 'test.ping') throw problem('conflict', 'The webhook is disabled: enable it before retrying its deliveries');
    const event = await knex('events').where({ id: delivery.event_id, org_id: hook.org_id }).first('id');
    if (!event) throw problem('not_found', "The delivery's event is no longer stored");
    const attempt = (await nextAttempts(knex, hook.id, [event.id])).get(event.id)!;
    const outcome = await retryDeliveryNow(workflows, event.id, hook.id, attempt);
    ctx.status = 202;
    ctx.body = { object: 'webhook_delivery_retry', webhookId: hook.id, eventId: event.id, attempt: outcome === 'started' ? attempt : null, running: outcome === 'running' };
  },
});
