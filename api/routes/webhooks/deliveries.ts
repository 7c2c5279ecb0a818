import { type WebhookDeliveryRow, webhookDeliveryDto, webhookDeliverySchema } from '../../../shared/webhooks/model.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { webhookFor, webhookIdParam } from '../../resources/webhooks.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }, { id: string }>({
  method: 'get',
  path: '/api/webhooks/:id/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: 'Delivery attempts, newest first (cursor pagination)',
  description:
    'Request and response bodies are not stored. `startingAfter` = the id of the last delivery received; Link rel=next while ' +
    'more follow (and rel=prev, `endingBefore`, back).',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  params: webhookIdParam,
  // endingBefore too: the helper's rel=prev links use it.
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'Page of deliveries', schema: listOf(webhookDeliverySchema) } },
  async handler(ctx, { params, query }) {
    const hook = await webhookFor(ctx, params.id, 'read');
    const { knex } = ctx.services;
    const limit = limitFrom(query.limit, 20, 100);
    const { rows: page, hasMore } = await cursorPage<WebhookDeliveryRow>(ctx, knex('webhook_deliveries').where({ webhook_id: hook.id }), {
      limit,
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = {
      object: 'list',
      hasMore,
      data: page.map(webhookDeliveryDto),
    };
  },
});
