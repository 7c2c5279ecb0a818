// Password reset (SPEC 5.4): a single-use token, mailed through the outbox (shared/mail); using
// it ends every session of the account. Only its hash is kept, and the mail's body is sealed.
import type { Knex } from 'knex';
import { sha256Hex } from '../crypto.ts';
import { User } from '../db/models.ts';
import { problem } from '../errors.ts';
import { newToken } from '../ids.ts';
import { queueMail } from '../mail/outbox.ts';
import { revokeAccountAuthorizations } from '../oidc/revoke.ts';
import { hashPassword } from './passwords.ts';
import { deleteSessions } from './sessions.ts';

const RESET_TTL_MS = 60 * 60 * 1000;

/**
 * Issues a reset token for the user and queues its mail (sealed under `secretsKey`), in one
 * transaction; returns the token and the mail's id. Kick the mail sender once this resolves.
 */
export async function issueResetToken(
  knex: Knex,
  user: User,
  opts: { publicUrl: string; secretsKey: Buffer | undefined },
): Promise<{ token: string; mailId: string }> {
  const token = newToken();
  const expiresAt = new Date(Date.now() + RESET_TTL_MS);
  const mailId = await knex.transaction(async (trx) => {
    await trx('password_resets').insert({ token_hash: sha256Hex(token), user_id: user.id, expires_at: expiresAt });
    return queueMail(trx, opts.secretsKey, {
      to: user.email,
      subject: 'Reset your password',
      text:
        `Use this token within one hour to choose a new password:\n\n${token}\n\nPOST ${opts.publicUrl}/api/auth/reset-password {"token": ` +
        `"...", "newPassword": "..."}`,
      expiresAt,
    });
  });
  return { token, mailId };
}

/** Pending reset links die whenever the password changes. */
export async function invalidateResetTokens(knex: Knex, userId: string): Promise<void> {
  await knex('password_resets').where({ user_id: userId }).whereNull('used_at').update({ used_at: new Date() });
}

/** Call inside a transaction: the OAuth revocation failing leaves the password as it was (SPEC 5.4). */
export async function setPassword(knex: Knex, userId: string, newPassword: string): Promise<void> {
  const [user] = await User.query(knex)
    .patch({ password_hash: await hashPassword(newPassword), updated_at: new Date() })
    .where({ id: userId })
    .returning('email');
  await invalidateResetTokens(knex, userId);
  if (user) await revokeAccountAuthorizations(knex, userId, user.email);
}

/** Consumes a reset token, sets the password and ends every session. */
export async function redeemResetToken(knex: Knex, token: string, newPassword: string): Promise<void> {
  await knex.transaction(async (trx) => {
    const row = await trx('password_resets')
      .where({ token_hash: sha256Hex(token) })
      .forUpdate()
      .first();
    if (!row || row.used_at || row.expires_at.getTime() <= Date.now()) {
      throw problem('validation_failed', {
        detail: 'The reset token is invalid, used or expired',
        errors: [{ field: 'token', code: 'invalid_value', message: 'The reset token is invalid, used or expired' }],
      });
    }
    await setPassword(trx, row.user_id, newPassword);
    await deleteSessions(trx, row.user_id);
  });
}
