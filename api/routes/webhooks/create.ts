import { WEBHOOK_EVENT_TYPES } from '../../../shared/events/publish.ts';
import { problem } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { encryptSecret } from '../../../shared/secrets.ts';
import { type WebhookRow, webhookDto, webhookSchema } from '../../../shared/webhooks/model.ts';
import { generateWebhookSecret } from '../../../shared/webhooks/signature.ts';
import { defineRoute } from '../../route.ts';
import { allowed } from '../../resources/webhooks.ts';
import { assertWebhookUrl } from './_url.ts';

export const MAX_WEBHOOKS_PER_SCOPE = 20;

interface Body {
  level: 'space' | 'org';
  spaceId?: string;
  url: string;
  events: string[];
  packageId?: string | null;
  payloadMode?: 'full' | 'summary';
  enabled?: boolean;
}

export const webhookFields = {
  url: { type: 'string', format: 'uri', maxLength: 2000 },
  events: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...WEBHOOK_EVENT_TYPES] } },
  packageId: { type: ['string', 'null'], pattern: '^@[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$' },
  payloadMode: { enum: ['full', 'summary'] },
  enabled: { type: 'boolean' },
};

export default defineRoute<Body>({
  method: 'post',
  path: '/api/webhooks',
  operationId: 'createWebhook',
  summary: 'Create a webhook; the signing secret is returned once',
  description:
    'Space level needs `webhooks:write` in `spaceId` (an API key: its own space only); organization level needs `org-webhooks:write` ' +
    'and a session. HTTPS only; private, loopback, link-local and reserved destinations are refused with `blocked_url`. At most ' +
    '20 webhooks per space and per organization.',
  tag: 'Webhooks',
  auth: 'any',
  context: 'org',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  idempotent: true,
  shownOnce: ['secret'],
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['level', 'url', 'events'],
    properties: { level: { enum: ['space', 'org'] }, spaceId: { type: 'string' }, ...webhookFields },
    if: { properties: { level: { const: 'space' } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword
    then: { required: ['spaceId'] },
  },
  responses: { 201: { description: 'Created, with `secret`', schema: webhookSchema } },
  // The permission depends on the body's level and space: a hook, so an Idempotency-Key replay checks it too.
  async authorize(ctx, { body }) {
    if (!(await allowed(ctx, body.level, body.level === 'space' ? body.spaceId! : null, 'write'))) {
      throw problem(
        'forbidden',
        body.level === 'org' ? 'Organization webhooks need org-webhooks:write and a session' : 'This needs webhooks:write in that space',
      );
    }
  },
  async handler(ctx, { body }) {
    const { knex, config } = ctx.services;
    const orgId = ctx.state.tenancy!.org!.id;
    const spaceId = body.level === 'space' ? body.spaceId! : null;
    await assertWebhookUrl(ctx, body.url);
    const secret = generateWebhookSecret();
    const row = await knex.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`webhooks:${orgId}:${spaceId ?? 'org'}`]);
      const q = trx('webhooks').where({ org_id: orgId, level: body.level });
      if (spaceId) q.where({ space_id: spaceId });
      const [{ count }] = await q.count<{ count: number }[]>('* as count');
      if (Number(count) >= MAX_WEBHOOKS_PER_SCOPE) {
        throw problem('webhook_limit_reached', `This ${body.level === 'org' ? 'organization' : 'space'} already has ${MAX_WEBHOOKS_PER_SCOPE} webhooks`);
      }
      const [inserted] = await trx('webhooks')
        .insert({
          id: newId('wh'),
          org_id: orgId,
          level: body.level,
          space_id: spaceId,
          url: body.url,
          events: body.events,
          package_id: body.packageId ?? null,
          payload_mode: body.payloadMode ?? 'full',
          enabled: body.enabled ?? true,
          secret_enc: encryptSecret(config.secretsKey, secret),
          created_by: ctx.state.auth!.userId,
        })
        .returning('*');
      return inserted as WebhookRow;
    });
    ctx.status = 201;
    ctx.body = { ...webhookDto(row), secret };
  },
});
