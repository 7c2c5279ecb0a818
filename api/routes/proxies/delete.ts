import { isForeignKeyViolation } from '../../../shared/db/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/proxies/:id',
  operationId: 'deleteProxy',
  summary: 'Remove an outbound proxy',
  description:
    'A proxy that models name as `proxyId` is kept: 409 `conflict`; change those models first. Deleting the default proxy sends ' +
    "the other models' calls directly.",
  tag: 'Proxies',
  auth: 'any',
  context: 'org',
  scope: 'proxies:delete',
  params: idParams,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    try {
      const n = await ctx.services.knex('proxies').where({ id: params.id, org_id: ctx.state.tenancy!.org!.id }).delete();
      if (!n) throw problem('not_found', 'No such proxy');
    } catch (err) {
      if (isForeignKeyViolation(err)) throw problem('conflict', 'Models send their calls through this proxy; change their proxyId first');
      throw err;
    }
    ctx.status = 204;
  },
});
