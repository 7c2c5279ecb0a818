import type { User } from '../../../shared/db/models.ts';
import { consumeBootstrap, recordInstanceOwner } from '../../../shared/identity/bootstrap.ts';
import { createOrganization } from '../../../shared/identity/tenancy.ts';
import { createUser } from '../../../shared/identity/users.ts';
import { defineRoute } from '../../route.ts';
import { email, name, password } from '../../schemas.ts';
import { signIn } from './_signed-in.ts';
import { sessionSchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ token: string; email: string; password: string; name: string; organizationName?: string }>({
  method: 'post',
  path: '/api/auth/bootstrap/redeem',
  operationId: 'redeemBootstrap',
  summary: 'Create the first instance owner with the bootstrap token',
  description: 'Creates the owner, an organization with its default space, and signs in. Works once.',
  tag: 'Auth',
  auth: 'none',
  rateLimit: { points: 5, duration: 60, by: 'ip' },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['token', 'email', 'password', 'name'],
    properties: { token: { type: 'string', minLength: 1 }, email, password, name, organizationName: name },
  },
  responses: {
    201: {
      description: 'Owner created and signed in',
      schema: {
        ...sessionSchema,
        properties: {
          ...(sessionSchema.properties as object),
          organization: {
            type: 'object',
            properties: { id: { type: 'string' }, name: { type: 'string' }, defaultSpaceId: { type: 'string' } },
          },
        },
      },
    },
  },
  async handler(ctx, { body }) {
    const { knex } = ctx.services;
    const { user, org, defaultSpace } = await knex.transaction(async (trx) => {
      await consumeBootstrap(trx, body.token);
      const user = await createUser(trx, body);
      await recordInstanceOwner(trx, user.id);
      const created = await createOrganization(trx, body.organizationName ?? `${body.name}'s organization`, user.id);
      return { user, ...created };
    });
    ctx.status = 201;
    ctx.body = {
      ...(await signIn(ctx, user as User)),
      organization: { id: org.id, name: org.name, defaultSpaceId: defaultSpace.id },
    };
  },
});
