import { User } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { verifyPassword } from '../../../shared/identity/passwords.ts';
import { setPassword } from '../../../shared/identity/password-reset.ts';
import { deleteSessions } from '../../../shared/identity/sessions.ts';
import { sessionAuth } from '../../middleware/authenticate.ts';
import { defineRoute } from '../../route.ts';
import { password } from '../../schemas.ts';

export default defineRoute<{ currentPassword: string; newPassword: string }>({
  method: 'post',
  path: '/api/auth/change-password',
  operationId: 'changePassword',
  summary: "Change the password; ends the account's other sessions and keeps this one",
  tag: 'Auth',
  auth: 'session',
  rateLimit: { points: 10, duration: 60, by: 'ip', productionOnly: true },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['currentPassword', 'newPassword'],
    properties: { currentPassword: { type: 'string', minLength: 1 }, newPassword: password },
  },
  responses: { 200: { description: 'Password changed', schema: { type: 'object', properties: { endedSessions: { type: 'integer' } } } } },
  async handler(ctx, { body }) {
    const auth = sessionAuth(ctx);
    const { knex } = ctx.services;
    const user = await User.query(knex).findById(auth.userId);
    if (!user || !(await verifyPassword(user.password_hash, body.currentPassword))) {
      throw problem('forbidden', { detail: 'The current password is wrong', param: 'currentPassword' });
    }
    const endedSessions = await knex.transaction(async (trx) => {
      await setPassword(trx, user.id, body.newPassword);
      return deleteSessions(trx, user.id, auth.session.id);
    });
    ctx.body = { endedSessions };
  },
});
