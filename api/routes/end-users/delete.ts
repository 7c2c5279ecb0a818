import { EndUser } from '../../../shared/db/models.ts';
import { defineRoute } from '../../route.ts';
import { endUserIdParam, findEndUser } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/end-users/:id',
  operationId: 'deleteEndUser',
  summary: 'Delete an end-user (its runs stay, without the link)',
  tag: 'End-users',
  auth: 'any',
  context: 'space',
  scope: 'end-users:delete',
  rateLimit: { points: 60, duration: 60, by: 'identity' },
  params: endUserIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const row = await findEndUser(ctx, params.id);
    await EndUser.query(ctx.services.knex).delete().where({ id: row.id, org_id: row.org_id });
    ctx.status = 204;
  },
});
