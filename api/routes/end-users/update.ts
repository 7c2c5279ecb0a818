import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { EndUser } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { endUserDto, endUserSchema } from '../../../shared/identity/model.ts';
import { defineRoute } from '../../route.ts';
import { endUserFields, endUserIdParam, findEndUser } from './_shared.ts';

export default defineRoute<{ externalId?: string; name?: string }, unknown, { id: string }>({
  method: 'patch',
  path: '/api/end-users/:id',
  operationId: 'updateEndUser',
  summary: 'Change an end-user (merge semantics)',
  tag: 'End-users',
  auth: 'any',
  context: 'space',
  scope: 'end-users:write',
  rateLimit: { points: 60, duration: 60, by: 'identity' },
  params: endUserIdParam,
  body: { type: 'object', additionalProperties: false, properties: endUserFields },
  responses: { 200: { description: 'Updated', schema: endUserSchema } },
  async handler(ctx, { body, params }) {
    const current = await findEndUser(ctx, params.id);
    const patch: Partial<EndUser> = { updated_at: new Date() };
    if (body.externalId !== undefined) patch.external_id = body.externalId;
    if (body.name !== undefined) patch.name = body.name;
    try {
      const [row] = (await EndUser.query(ctx.services.knex)
        .patch(patch)
        .where({ id: current.id, org_id: current.org_id })
        .returning('*')) as unknown as EndUser[];
      ctx.body = endUserDto(row);
    } catch (err) {
      if (isUniqueViolation(err))
        throw problem('conflict', { detail: `An end-user with externalId "${body.externalId}" exists in this space`, param: 'externalId' });
      throw err;
    }
  },
});
