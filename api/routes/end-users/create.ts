import { isUniqueViolation } from '../../../shared/db/errors.ts';
import { EndUser } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { endUserDto, endUserSchema } from '../../../shared/identity/model.ts';
import { newId } from '../../../shared/ids.ts';
import { defineRoute } from '../../route.ts';
import { endUserFields } from './_shared.ts';

export default defineRoute<{ externalId: string; name: string }>({
  method: 'post',
  path: '/api/end-users',
  operationId: 'createEndUser',
  summary: 'Create an end-user of the space',
  description: '`externalId` is unique per space (409 `conflict` otherwise). Honours Idempotency-Key.',
  tag: 'End-users',
  auth: 'any',
  context: 'space',
  scope: 'end-users:write',
  rateLimit: { points: 60, duration: 60, by: 'identity' },
  idempotent: true,
  body: { type: 'object', additionalProperties: false, required: ['externalId', 'name'], properties: endUserFields },
  responses: { 201: { description: 'Created', schema: endUserSchema } },
  async handler(ctx, { body }) {
    const { org, space } = ctx.state.tenancy!;
    try {
      const row = await EndUser.query(ctx.services.knex).insertAndFetch({
        id: newId('eu'),
        org_id: org!.id,
        space_id: space!.id,
        external_id: body.externalId,
        name: body.name,
      });
      ctx.status = 201;
      ctx.body = endUserDto(row);
    } catch (err) {
      if (isUniqueViolation(err))
        throw problem('conflict', { detail: `An end-user with externalId "${body.externalId}" exists in this space`, param: 'externalId' });
      throw err;
    }
  },
});
