import { redeemResetToken } from '../../../shared/identity/password-reset.ts';
import { defineRoute } from '../../route.ts';
import { password } from '../../schemas.ts';

export default defineRoute<{ token: string; newPassword: string }>({
  method: 'post',
  path: '/api/auth/reset-password',
  operationId: 'resetPassword',
  summary: 'Set a new password with a reset token; ends every session',
  tag: 'Auth',
  auth: 'none',
  rateLimit: { points: 5, duration: 60, by: 'ip', productionOnly: true },
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['token', 'newPassword'],
    properties: { token: { type: 'string', minLength: 1 }, newPassword: password },
  },
  responses: { 200: { description: 'Password reset', schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
  async handler(ctx, { body }) {
    await redeemResetToken(ctx.services.knex, body.token, body.newPassword);
    ctx.body = { status: 'ok' };
  },
});
