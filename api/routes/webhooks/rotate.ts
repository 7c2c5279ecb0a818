import { MAX_ROTATION_WINDOW_SECONDS, rotateWebhookSecret } from '../../../shared/webhooks/rotate.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor, webhookIdParam } from '../../resources/webhooks.ts';

export default defineRoute<{ windowSeconds?: number }, unknown, { id: string }>({
  method: 'post',
  path: '/api/webhooks/:id/rotate',
  operationId: 'rotateWebhookSecret',
  summary: 'Rotate the signing secret',
  description: 'During the window (default 7 days, at most 30) both secrets sign every delivery; after it only the new one does.',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 5, duration: 60, by: 'identity' },
  params: webhookIdParam,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: { windowSeconds: { type: 'integer', minimum: 0, maximum: MAX_ROTATION_WINDOW_SECONDS } },
  },
  responses: {
    200: {
      description: 'The new secret',
      schema: {
        type: 'object',
        required: ['secret', 'secretPrevious', 'rotationWindowEndsAt'],
        properties: { secret: { type: 'string' }, secretPrevious: { type: 'string' }, rotationWindowEndsAt: { type: 'string', format: 'date-time' } },
      },
    },
  },
  async handler(ctx, { body, params }) {
    const hook = await webhookFor(ctx, params.id, 'write');
    ctx.body = await rotateWebhookSecret(ctx.services.knex, ctx.services.config.secretsKey, hook, body.windowSeconds);
  },
});
