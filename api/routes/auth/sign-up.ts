import { problem } from '../../../shared/errors.ts';
import { createUser } from '../../../shared/identity/users.ts';
import { defineRoute } from '../../route.ts';
import { email, name, password } from '../../schemas.ts';
import { signIn } from './_signed-in.ts';
import { sessionSchema } from '../../../shared/identity/model.ts';

export default defineRoute<{ email: string; password: string; name: string }>({
  method: 'post',
  path: '/api/auth/sign-up/email',
  operationId: 'signUp',
  summary: 'Create an account and sign in',
  description: 'Refused with 404 when AUTH_SIGNUP is `closed`.',
  tag: 'Auth',
  auth: 'none',
  rateLimit: { points: 10, duration: 60, by: 'ip', productionOnly: true },
  body: { type: 'object', additionalProperties: false, required: ['email', 'password', 'name'], properties: { email, password, name } },
  responses: { 201: { description: 'Account created; session cookie set', schema: sessionSchema } },
  async handler(ctx, { body }) {
    if (ctx.services.config.authSignup === 'closed') throw problem('not_found', 'Sign-up is closed on this instance');
    const user = await createUser(ctx.services.knex, body);
    ctx.status = 201;
    ctx.body = await signIn(ctx, user);
  },
});
