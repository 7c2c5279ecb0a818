import { createApiKey } from '../../../shared/identity/api-keys.ts';
import { defineRoute } from '../../route.ts';
import { keyHolder } from '../../resources/api-keys.ts';
import { dateTime, name } from '../../schemas.ts';
import { apiKeyDto, apiKeySchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ name: string; scopes?: string[]; expiresAt?: string | null }>({
  method: 'post',
  path: '/api/api-keys',
  operationId: 'createApiKey',
  summary: 'Create an API key in the selected space',
  description:
    'Session only (an API key cannot create a key), with `api-keys:create`. Scopes the caller does not hold are dropped silently; ' +
    'a scope no key can carry is 400 `invalid_request`; omitted or empty = every grantable scope the caller holds. The full `key` ' +
    'is returned once.',
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:create',
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name,
      scopes: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      expiresAt: { anyOf: [dateTime, { type: 'null' }] },
    },
  },
  responses: { 201: { description: 'Created; `key` is shown this once', schema: apiKeySchema } },
  async handler(ctx, { body }) {
    const { key, row } = await createApiKey(ctx.services.knex, keyHolder(ctx), {
      name: body.name,
      scopes: body.scopes,
      expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
    });
    ctx.status = 201;
    ctx.body = { ...apiKeyDto(row), key };
  },
});
