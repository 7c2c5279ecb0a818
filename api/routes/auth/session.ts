import { User } from '../../../shared/db/models.ts';
import { sessionAuth } from '../../middleware/authenticate.ts';
import { defineRoute } from '../../route.ts';
import { sessionSchema, userDto } from '../../../shared/identity/model.ts';

export default defineRoute({
  method: 'get',
  path: '/api/auth/session',
  operationId: 'getSession',
  summary: 'The signed-in user and session expiry',
  tag: 'Auth',
  auth: 'session',
  responses: { 200: { description: 'Current session', schema: sessionSchema } },
  async handler(ctx) {
    const auth = sessionAuth(ctx);
    const user = await User.query(ctx.services.knex).findById(auth.userId);
    ctx.body = { user: userDto(user!), session: { expiresAt: auth.session.expires_at.toISOString() } };
  },
});
