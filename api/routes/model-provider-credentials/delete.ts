import { isForeignKeyViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/model-provider-credentials/:id',
  operationId: 'deleteModelProviderCredential',
  summary: 'Remove a model provider credential',
  description: 'A credential that models still use is kept: 409 `conflict`; change or remove those models first.',
  tag: 'Models',
  auth: 'any',
  context: 'org',
  scope: 'models:delete',
  params: idParams,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    try {
      const n = await ctx.services.knex('model_provider_credentials').where({ id: params.id, org_id: ctx.state.tenancy!.org!.id }).delete();
      if (!n) throw problem('not_found', 'No such model provider credential');
    } catch (err) {
      if (isForeignKeyViolation(err)) throw problem('conflict', 'Models use this credential; point them elsewhere first');
      throw err;
    }
    ctx.status = 204;
  },
});
