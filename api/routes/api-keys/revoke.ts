import { ApiKey } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/api-keys/:id',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key, immediately',
  description: 'Your own keys with `api-keys:delete`; anyone\'s in the space with `spaces:write` as well.',
  tag: 'API keys',
  auth: 'session',
  context: 'space',
  scope: 'api-keys:delete',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
  responses: { 204: { description: 'Revoked' } },
  async handler(ctx, { params }) {
    const { space, org, scopes } = ctx.state.tenancy!;
    const key = await ApiKey.query(ctx.services.knex).findOne({ id: params.id, org_id: org!.id, space_id: space!.id });
    if (!key || key.revoked_at) throw problem('not_found', 'No such API key');
    if (key.created_by !== ctx.state.auth!.userId && !scopes.has('spaces:write')) {
      throw problem('forbidden', 'Only the key\'s creator or a space admin can revoke it');
    }
    await ApiKey.query(ctx.services.knex).patch({ revoked_at: new Date() }).where({ id: key.id });
    ctx.status = 204;
  },
});
