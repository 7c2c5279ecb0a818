import { addSpaceMember, type RoleChoice } from '../../../shared/identity/members.ts';
import { defineRoute } from '../../route.ts';
import { spaceRole } from '../../schemas.ts';
import { roleChoiceSchema, spaceAccess, spaceIdParam } from './_access.ts';
import { spaceMemberDto, spaceMemberSchema } from '../../../shared/identity/model.ts';

export default defineRoute<RoleChoice & { userId: string }, unknown, { spaceId: string }>({
  method: 'post',
  path: '/api/spaces/:spaceId/members',
  operationId: 'addSpaceMember',
  summary: 'Give an organization member a role in a space',
  description: 'Needs `spaces:write` in the space; the role may only grant permissions the caller holds there.',
  tag: 'Spaces',
  auth: 'session',
  context: 'org',
  params: spaceIdParam,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['userId'],
    properties: { userId: { type: 'string', minLength: 1 }, preset_role: spaceRole, custom_role_id: { type: ['string', 'null'] } },
    ...roleChoiceSchema,
  },
  responses: { 201: { description: 'Added', schema: spaceMemberSchema } },
  async handler(ctx, { body, params }) {
    const { space, held } = await spaceAccess(ctx, params.spaceId, 'spaces:write');
    const m = await addSpaceMember(ctx.services.knex, { space, held, userId: ctx.state.auth!.userId }, body.userId, body);
    ctx.status = 201;
    ctx.body = spaceMemberDto(m);
  },
});
