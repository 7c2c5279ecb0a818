import { Session } from '../../../shared/db/models.ts';
import { sessionAuth } from '../../middleware/authenticate.ts';
import { defineRoute } from '../../route.ts';
import { clearSessionCookie } from '../../session-cookie.ts';

export default defineRoute({
  method: 'post',
  path: '/api/auth/sign-out',
  operationId: 'signOut',
  summary: 'End the current session',
  tag: 'Auth',
  auth: 'session',
  responses: { 204: { description: 'Signed out; cookie cleared' } },
  async handler(ctx) {
    await Session.query(ctx.services.knex).deleteById(sessionAuth(ctx).session.id);
    clearSessionCookie(ctx);
    ctx.status = 204;
  },
});
