import { removeSpaceMember } from '../../../shared/identity/members.ts';
import { defineRoute } from '../../route.ts';
import { spaceAccess } from './_access.ts';

export default defineRoute<unknown, unknown, { spaceId: string; userId: string }>({
  method: 'delete',
  path: '/api/spaces/:spaceId/members/:userId',
  operationId: 'removeSpaceMember',
  summary: 'End an explicit space membership',
  description: "Needs `spaces:write`; the member's role must be one the caller could have granted.",
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
    const { space, held } = await spaceAccess(ctx, params.spaceId, 'spaces:write');
    await removeSpaceMember(ctx.services.knex, ctx.services.workflows, { space, held, userId: ctx.state.auth!.userId }, params.userId);
    ctx.status = 204;
  },
});
