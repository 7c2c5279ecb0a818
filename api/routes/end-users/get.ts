import { endUserDto, endUserSchema } from '../../../shared/identity/model.ts';
import { defineRoute } from '../../route.ts';
import { endUserIdParam, findEndUser } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/end-users/:id',
  operationId: 'getEndUser',
  summary: 'Read an end-user',
  tag: 'End-users',
  auth: 'any',
  context: 'space',
  scope: 'end-users:read',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  params: endUserIdParam,
  responses: { 200: { description: 'The end-user', schema: endUserSchema } },
  async handler(ctx, { params }) {
    ctx.body = endUserDto(await findEndUser(ctx, params.id));
  },
});
