import { sendTestPing } from '../../../shared/webhooks/test-ping.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor, webhookIdParam } from '../../resources/webhooks.ts';

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
    ctx.body = await sendTestPing(ctx.services.knex, ctx.services.workflows, hook);
  },
});
