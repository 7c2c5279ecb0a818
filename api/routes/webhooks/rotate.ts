import { decryptSecret, encryptSecret } from '../../../shared/secrets.ts';
import { generateWebhookSecret } from '../../../shared/webhooks/signature.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor, webhookIdParam } from './_access.ts';

export const DEFAULT_ROTATION_WINDOW_SECONDS = 604_800;
export const MAX_ROTATION_WINDOW_SECONDS = 30 * 86_400;

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
    const { knex, config } = ctx.services;
    const hook = await webhookFor(ctx, params.id, 'write');
    const previous = decryptSecret(config.secretsKey, hook.secret_enc);
    const secret = generateWebhookSecret();
    const endsAt = new Date(Date.now() + (body.windowSeconds ?? DEFAULT_ROTATION_WINDOW_SECONDS) * 1000);
    await knex('webhooks')
      .where({ id: hook.id, org_id: hook.org_id })
      .update({ secret_enc: encryptSecret(config.secretsKey, secret), secret_previous_enc: hook.secret_enc, rotation_window_ends_at: endsAt, updated_at: new Date() });
    ctx.body = { secret, secretPrevious: previous, rotationWindowEndsAt: endsAt.toISOString() };
  },
});
