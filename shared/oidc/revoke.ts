// A password change or reset ends what the account granted through the authorization server
// (SPEC 5.4): its refresh tokens, grants, device codes and sign-in sessions there, for the user
// and for the end-users they became through space-level clients. Issued JWTs live until expiry.
import type { Knex } from 'knex';
import { problem } from '../errors.ts';
import { normalizeEmail } from '../identity/users.ts';

/** Runs inside the password change's transaction: if it fails, the password does not change. */
export async function revokeAccountAuthorizations(trx: Knex, userId: string, email: string): Promise<number> {
  try {
    const endUsers = trx('end_users')
      .where({ external_id: normalizeEmail(email) })
      .select('id');
    return await trx('oidc_payloads').where('account_id', userId).orWhereIn('account_id', endUsers).del();
  } catch (err) {
    throw problem('credential_change_revocation_failed', {
      detail: `The password was not changed: its OAuth tokens could not be revoked (${(err as Error).message})`,
    });
  }
}
