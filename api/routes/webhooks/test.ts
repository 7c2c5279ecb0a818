import { startDelivery, storeEvent } from '../../../shared/events/publish.ts';
import { newId } from '../../../shared/ids.ts';
import { envelopeBody } from '../../../shared/webhooks/payload.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor, webhookIdParam } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'post',
  path: '/api/webhooks/:id/test',
  operationId: 'testWebhook',
  summary: 'Queue a signed test.ping (one attempt, sent even when disabled)',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 5, duration: 60, by: 'identity' },
  params: webhookIdParam,
  responses: {
    200: {
      description: 'Queued',
      schema: { type: 'object', required: ['eventId', 'payload'], properties: { eventId: { type: 'string' }, payload: { type: 'object' } } },
    },
  },
  async handler(ctx, { params }) {
    const hook = await webhookFor(ctx, params.id, 'write');
    const event = {
      id: newId('evt'),
      type: 'test.ping',
      orgId: hook.org_id,
      spaceId: hook.space_id,
      packageId: null,
      object: { object: 'webhook', id: hook.id, message: 'This is a test event.' },
      occurredAt: new Date(),
    };
    await storeEvent(ctx.services.knex, event);
    await startDelivery(ctx.services.workflows, event.id, hook.id, true);
    const payload = envelopeBody(
      { id: event.id, type: event.type, org_id: event.orgId, space_id: event.spaceId, package_id: null, data: { object: event.object }, occurred_at: event.occurredAt },
      hook.payload_mode,
    );
    ctx.body = { eventId: event.id, payload: JSON.parse(payload) };
  },
});
