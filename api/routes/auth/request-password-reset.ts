import { issueResetToken } from '../../../shared/identity/password-reset.ts';
import { findUserByEmail } from '../../../shared/identity/users.ts';
import { defineRoute } from '../../route.ts';
import { email } from '../../schemas.ts';

export default defineRoute<{ email: string }>({
  method: 'post',
  path: '/api/auth/request-password-reset',
  operationId: 'requestPasswordReset',
  summary: 'Mail a password reset token',
  description:
    'Always 202, whether or not the address has an account. The token is mailed over `SMTP_URL`; without it the mail waits (sealed) ' +
    'in the outbox, and outside production the token is logged instead.',
  tag: 'Auth',
  auth: 'none',
  rateLimit: { points: 5, duration: 60, by: 'ip', productionOnly: true },
  body: { type: 'object', additionalProperties: false, required: ['email'], properties: { email } },
  responses: { 202: { description: 'Accepted' } },
  async handler(ctx, { body }) {
    const { knex, log, config, mail } = ctx.services;
    // Answered before any lookup, so the response time does not tell whether the account exists.
    const issue = async () => {
      const user = await findUserByEmail(knex, body.email);
      if (!user) return;
      const { token, mailId } = await issueResetToken(knex, user, config);
      if (mail.sends) {
        mail.kick();
        log.info({ userId: user.id, mailId }, 'password reset mail queued');
      } else if (config.nodeEnv !== 'production') {
        // A developer without a mail server still needs the token; never in production, where
        // logs travel further than the account's owner.
        log.warn(
          { userId: user.id, mailId, resetToken: token },
          'SMTP_URL is not set: the password reset token is logged here instead of mailed (never with NODE_ENV=production)',
        );
      } else {
        log.error(
          { userId: user.id, mailId },
          'SMTP_URL is not set: the password reset mail waits in the outbox, sealed, until SMTP_URL is set or it expires (1 h)',
        );
      }
    };
    void issue().catch((err) => log.error({ err }, 'password reset could not be queued'));
    ctx.status = 202;
  },
});
