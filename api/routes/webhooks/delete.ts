import { defineRoute } from '../../route.ts';
import { webhookFor, webhookIdParam } from '../../resources/webhooks.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/webhooks/:id',
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook and its delivery history',
  description: 'Deliveries still waiting on the ladder find the webhook gone and stop.',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  params: webhookIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const hook = await webhookFor(ctx, params.id, 'delete');
    await ctx.services.knex('webhooks').where({ id: hook.id, org_id: hook.org_id }).delete(); // deliveries cascade
    ctx.status = 204;
  },
});
