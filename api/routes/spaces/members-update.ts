import { type RoleChoice, updateSpaceMember } from '../../../shared/identity/members.ts';
import { defineRoute } from '../../route.ts';
import { spaceRole } from '../../schemas.ts';
import { roleChoiceSchema, spaceAccess } from './_access.ts';
import { spaceMemberDto, spaceMemberSchema } from '../../../shared/identity/model.ts';

export default defineRoute<RoleChoice, unknown, { spaceId: string; userId: string }>({
  method: 'patch',
  path: '/api/spaces/:spaceId/members/:userId',
  operationId: 'updateSpaceMember',
  summary: 'Change the role of an existing explicit membership',
  description:
    "SPEC 4.8: 404 without an explicit membership row; the new role may only grant permissions the caller holds; the member's " +
    "current role must be one the caller could have granted (403 otherwise, including for one's own role); a `custom_role_id` " +
    'must name a role bundle of the organization (404 otherwise).',
  tag: 'Spaces',
  auth: 'session',
  context: 'org',
  params: {
    type: 'object',
    required: ['spaceId', 'userId'],
    properties: { spaceId: { type: 'string', minLength: 1 }, userId: { type: 'string', minLength: 1 } },
  },
  body: {
    type: 'object',
    additionalProperties: false,
    properties: { preset_role: spaceRole, custom_role_id: { type: ['string', 'null'] } },
    ...roleChoiceSchema,
  },
  responses: { 200: { description: 'Updated membership', schema: spaceMemberSchema } },
  async handler(ctx, { body, params }) {
    const { space, held } = await spaceAccess(ctx, params.spaceId, 'spaces:write');
    const updated = await updateSpaceMember(ctx.services.knex, ctx.services.workflows, { space, held, userId: ctx.state.auth!.userId }, params.userId, body);
    ctx.body = spaceMemberDto(updated);
  },
});
