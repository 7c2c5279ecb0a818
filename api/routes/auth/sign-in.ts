import { problem } from '../../../shared/errors.ts';
import { burnVerification, verifyPassword } from '../../../shared/identity/passwords.ts';
import { findUserByEmail } from '../../../shared/identity/users.ts';
import { defineRoute } from '../../route.ts';
import { email } from '../../schemas.ts';
import { signIn } from './_signed-in.ts';
import { sessionSchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ email: string; password: string }>({
  method: 'post',
  path: '/api/auth/sign-in/email',
  operationId: 'signIn',
  summary: 'Sign in with email and password',
  tag: 'Auth',
  auth: 'none',
  rateLimit: { points: 10, duration: 60, by: 'ip', productionOnly: true },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['email', 'password'],
    properties: { email, password: { type: 'string', minLength: 1, maxLength: 256 } },
  },
  responses: { 200: { description: 'Signed in; session cookie set', schema: sessionSchema } },
  async handler(ctx, { body }) {
    const user = await findUserByEmail(ctx.services.knex, body.email);
    if (!user) {
      await burnVerification(body.password);
      throw problem('unauthorized', 'Email or password is wrong');
    }
    if (!(await verifyPassword(user.password_hash, body.password))) throw problem('unauthorized', 'Email or password is wrong');
    ctx.body = await signIn(ctx, user);
  },
});
