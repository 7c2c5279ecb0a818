// Who a token is about (SPEC 5.5). Instance- and org-level clients sign platform users in: the
// subject is the user (`usr_`). A space-level client signs in an end-user of its space: the person
// proves who they are with the service's own sign-in (realm `end_user:<spaceId>`), and the
// subject is the space's end-user (`eu_`) whose `external_id` is their email; with the client's
// `allowSignup` a first sign-in creates that end-user, otherwise it must exist already.
import type { Knex } from 'knex';
import { EndUser, User } from '../db/models.ts';
import { newId } from '../ids.ts';
import { normalizeEmail } from '../identity/users.ts';
import type { OAuthClientRow } from './clients.ts';

export interface AccountClaims {
  [claim: string]: unknown;
  sub: string;
  name: string;
  email?: string;
  email_verified?: boolean;
}

/** The claims oidc-provider publishes (ID token, userinfo) for a subject, or undefined when gone. */
export async function accountClaims(knex: Knex, sub: string): Promise<AccountClaims | undefined> {
  if (sub.startsWith('eu_')) {
    const eu = await EndUser.query(knex).findById(sub);
    return eu ? { sub, name: eu.name } : undefined;
  }
  const user = await User.query(knex).findById(sub);
  return user ? { sub, name: user.name, email: user.email, email_verified: false } : undefined;
}

export type SignInRefusal = 'not_a_member' | 'signup_closed';

/**
 * The subject a signed-in person becomes for this client: the user itself, or (space level) the
 * space's end-user for their email, created when the client allows sign-up.
 */
export async function subjectFor(knex: Knex, client: OAuthClientRow, user: User): Promise<{ sub: string } | { refused: SignInRefusal }> {
  if (client.level === 'instance') return { sub: user.id };
  if (client.level === 'org') {
    const member = await knex('org_members').where({ org_id: client.org_id, user_id: user.id }).first('user_id');
    return member ? { sub: user.id } : { refused: 'not_a_member' };
  }
  const email = normalizeEmail(user.email);
  const existing = await EndUser.query(knex).findOne({ space_id: client.space_id!, external_id: email });
  if (existing) return { sub: existing.id };
  if (!client.allow_signup) return { refused: 'signup_closed' };
  const created = await knex('end_users')
    .insert({ id: newId('eu'), org_id: client.org_id, space_id: client.space_id, external_id: email, name: user.name })
    .onConflict(['space_id', 'external_id'])
    .ignore()
    .returning('id');
  if (created.length) return { sub: created[0].id };
  const raced = await EndUser.query(knex).findOne({ space_id: client.space_id!, external_id: email });
  return { sub: raced!.id };
}
