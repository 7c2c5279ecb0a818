import { SpaceMember } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { memberScopes } from '../../../shared/identity/tenancy.ts';
import { isSubset } from '../../../shared/permissions.ts';
import { recheckScheduleAccess } from '../../../shared/schedules/access.ts';
import { defineRoute } from '../../route.ts';
import { spaceAccess } from './_access.ts';

export default defineRoute<unknown, unknown, { spaceId: string; userId: string }>({
  method: 'delete',
  path: '/api/spaces/:spaceId/members/:userId',
  operationId: 'removeSpaceMember',
  summary: 'End an explicit space membership',
  description: 'Needs `spaces:write`; the member\'s role must be one the caller could have granted.',
  tag: 'Spaces',
  auth: 'session',
  context: 'org',
  params: {
    type: 'object',
    required: ['spaceId', 'userId'],
    properties: { spaceId: { type: 'string', minLength: 1 }, userId: { type: 'string', minLength: 1 } },
  },
  responses: { 204: { description: 'Removed' } },
  async handler(ctx, { params }) {
    const { knex } = ctx.services;
    const { space, held } = await spaceAccess(ctx, params.spaceId, 'spaces:write');
    const current = await SpaceMember.query(knex).findOne({ space_id: space.id, user_id: params.userId, org_id: space.org_id });
    if (!current) throw problem('not_found', 'No explicit membership for this user in the space');
    if (!isSubset(await memberScopes(knex, current), held)) {
      throw problem('forbidden', 'The member\'s role holds permissions you could not have granted');
    }
    await SpaceMember.query(knex).delete().where({ space_id: space.id, user_id: params.userId });
    await recheckScheduleAccess(knex, ctx.services.workflows, space.org_id, params.userId);
    ctx.status = 204;
  },
});
