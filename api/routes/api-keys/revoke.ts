import { revokeApiKey } from '../../../shared/identity/api-keys.ts';
import { defineRoute } from '../../route.ts';
import { keyHolder } from '../../resources/api-keys.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/api-keys/:id',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key, immediately',
  description: "Your own keys with `api-keys:delete`; anyone's in the space with `spaces:write` as well.",
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:delete',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
  responses: { 204: { description: 'Revoked' } },
  async handler(ctx, { params }) {
    await revokeApiKey(ctx.services.knex, keyHolder(ctx), params.id);
    ctx.status = 204;
  },
});
