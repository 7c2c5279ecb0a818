import { type WebhookRow, webhookDto, webhookSchema } from '../../../shared/webhooks/model.ts';
import { defineRoute } from '../../route.ts';
import { webhookFor, webhookIdParam } from '../../resources/webhooks.ts';
import { assertWebhookUrl } from './_url.ts';
import { webhookFields } from './create.ts';

interface Body {
  url?: string;
  events?: string[];
  packageId?: string | null;
  payloadMode?: 'full' | 'summary';
  enabled?: boolean;
}

export default defineRoute<Body, unknown, { id: string }>({
  method: 'patch',
  path: '/api/webhooks/:id',
  operationId: 'updateWebhook',
  summary: 'Change a webhook (merge semantics; `secret` and `level` cannot change)',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  params: webhookIdParam,
  body: { type: 'object', additionalProperties: false, properties: webhookFields },
  responses: { 200: { description: 'Updated', schema: webhookSchema } },
  async handler(ctx, { body, params }) {
    const hook = await webhookFor(ctx, params.id, 'write');
    if (body.url !== undefined) await assertWebhookUrl(ctx, body.url);
    const patch: Record<string, unknown> = { updated_at: new Date() };
    if (body.url !== undefined) patch.url = body.url;
    if (body.events !== undefined) patch.events = body.events;
    if (body.packageId !== undefined) patch.package_id = body.packageId;
    if (body.payloadMode !== undefined) patch.payload_mode = body.payloadMode;
    if (body.enabled !== undefined) patch.enabled = body.enabled;
    const [row] = await ctx.services.knex('webhooks').where({ id: hook.id, org_id: hook.org_id }).update(patch).returning('*');
    ctx.body = webhookDto(row as WebhookRow);
  },
});
