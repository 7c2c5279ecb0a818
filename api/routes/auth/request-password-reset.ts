import { issueResetToken } from '../../../shared/identity/password-reset.ts';
import { findUserByEmail } from '../../../shared/identity/users.ts';
import { defineRoute } from '../../route.ts';
import { email } from '../../schemas.ts';

export default defineRoute<{ email: string }>({
  method: 'post',
  path: '/api/auth/request-password-reset',
  operationId: 'requestPasswordReset',
  summary: 'Mail a password reset token',
  description: 'Always 202, whether or not the address has an account. Until SMTP is configured the mail waits in the outbox table and the token is logged.',
  tag: 'Auth',
  auth: 'none',
  rateLimit: { points: 5, duration: 60, by: 'ip', productionOnly: true },
  body: { type: 'object', additionalProperties: false, required: ['email'], properties: { email } },
  responses: { 202: { description: 'Accepted' } },
  async handler(ctx, { body }) {
    const { knex, log, config } = ctx.services;
    // Answered before any lookup, so the response time does not tell whether the account exists.
    const issue = async () => {
      const user = await findUserByEmail(knex, body.email);
      if (!user) return;
      const token = await issueResetToken(knex, user, config.publicUrl);
      // No SMTP transport exists yet: the operator relays the token from the outbox or this line.
      log.warn({ userId: user.id, resetToken: token }, 'password reset token queued in mail_outbox (no SMTP configured)');
    };
    void issue().catch((err) => log.error({ err }, 'password reset could not be queued'));
    ctx.status = 202;
  },
});
