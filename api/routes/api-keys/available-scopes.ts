import { availableKeyScopes } from '../../../shared/identity/api-keys.ts';
import { defineRoute } from '../../route.ts';
import { keyHolder } from '../../resources/api-keys.ts';

export default defineRoute({
  method: 'get',
  path: '/api/api-keys/available-scopes',
  operationId: 'listAvailableApiKeyScopes',
  summary: 'Scopes the caller can put on a key in this space',
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:create',
  responses: {
    200: {
      description: 'Scopes',
      schema: { type: 'object', required: ['scopes'], properties: { scopes: { type: 'array', items: { type: 'string' } } } },
    },
  },
  async handler(ctx) {
    ctx.body = { scopes: availableKeyScopes(keyHolder(ctx)) };
  },
});
