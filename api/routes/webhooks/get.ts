import { webhookDto, webhookSchema } from '../../../shared/webhooks/model.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor, webhookIdParam } from '../../resources/webhooks.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/webhooks/:id',
  operationId: 'getWebhook',
  summary: 'Read a webhook (never its secret)',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  params: webhookIdParam,
  responses: { 200: { description: 'The webhook', schema: webhookSchema } },
  async handler(ctx, { params }) {
    ctx.body = webhookDto(await webhookFor(ctx, params.id, 'read'));
  },
});
