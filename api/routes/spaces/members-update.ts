import { SpaceMember } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { memberScopes } from '../../../shared/identity/tenancy.ts';
import { isSubset } from '../../../shared/permissions.ts';
import { recheckScheduleAccess } from '../../../shared/schedules/access.ts';
import { defineRoute } from '../../route.ts';
import { spaceRole } from '../../schemas.ts';
import { type RoleChoice, roleChoiceSchema, roleChoiceScopes, spaceAccess } from './_access.ts';
import { spaceMemberDto, spaceMemberSchema } from '../../../shared/identity/model.ts';

export default defineRoute<RoleChoice, unknown, { spaceId: string; userId: string }>({
  method: 'patch',
  path: '/api/spaces/:spaceId/members/:userId',
  operationId: 'updateSpaceMember',
  summary: 'Change the role of an existing explicit membership',
  description:
    'SPEC 4.8: 404 without an explicit membership row; the new role may only grant permissions the caller holds; the member\'s current role must be one the caller could have granted (403 otherwise, including for one\'s own role); a `custom_role_id` must name a role bundle of the organization (404 otherwise).',
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
    const { knex } = ctx.services;
    const { space, held } = await spaceAccess(ctx, params.spaceId, 'spaces:write');
    const current = await SpaceMember.query(knex).findOne({ space_id: space.id, user_id: params.userId, org_id: space.org_id });
    if (!current) throw problem('not_found', 'No explicit membership for this user in the space');
    if (params.userId === ctx.state.auth!.userId) throw problem('forbidden', 'You cannot change your own role');
    const next = await roleChoiceScopes(ctx, space.org_id, body);
    if (!isSubset(next, held)) throw problem('forbidden', 'The new role grants permissions you do not hold in this space');
    if (!isSubset(await memberScopes(knex, current), held)) {
      throw problem('forbidden', 'The member\'s current role holds permissions you could not have granted');
    }
    const [updated] = await SpaceMember.query(knex)
      .patch({ preset_role: body.preset_role ?? null, custom_role_id: body.custom_role_id ?? null })
      .where({ space_id: space.id, user_id: params.userId })
      .returning('*');
    await recheckScheduleAccess(knex, ctx.services.workflows, space.org_id, params.userId);
    ctx.body = spaceMemberDto(updated as unknown as SpaceMember);
  },
});
