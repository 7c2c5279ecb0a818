import { OrgMember, SpaceMember } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { isSubset } from '../../../shared/permissions.ts';
import { defineRoute } from '../../route.ts';
import { spaceRole } from '../../schemas.ts';
import { type RoleChoice, roleChoiceSchema, roleChoiceScopes, spaceAccess, spaceIdParam } from './_access.ts';
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
    const { knex } = ctx.services;
    const { space, held } = await spaceAccess(ctx, params.spaceId, 'spaces:write');
    if (space.kind === 'personal') throw problem('forbidden', 'A personal space has no other members');
    if (!(await OrgMember.query(knex).findOne({ org_id: space.org_id, user_id: body.userId }))) {
      throw problem('not_found', { detail: 'No such member in this organization', param: 'userId' });
    }
    if (!isSubset(await roleChoiceScopes(ctx, space.org_id, body), held)) {
      throw problem('forbidden', 'The role grants permissions you do not hold in this space');
    }
    if (await SpaceMember.query(knex).findOne({ space_id: space.id, user_id: body.userId })) {
      throw problem('already_member', 'The user already holds a role in this space; change it with PATCH');
    }
    const m = await SpaceMember.query(knex).insertAndFetch({
      space_id: space.id,
      user_id: body.userId,
      org_id: space.org_id,
      preset_role: body.preset_role ?? null,
      custom_role_id: body.custom_role_id ?? null,
    });
    ctx.status = 201;
    ctx.body = spaceMemberDto(m);
  },
});
