// The first instance owner (DESIGN.md section 5): a one-time token, printed at the first start
// of an empty database (or fixed by BOOTSTRAP_TOKEN), redeemed once.
import type { Knex } from 'knex';
import { safeEqual, sha256Hex } from '../crypto.ts';
import { problem } from '../errors.ts';
import { newToken } from '../ids.ts';

const KEY = 'bootstrap';

interface BootstrapState {
  token_hash: string;
  redeemed_at: string | null;
}

/**
 * On a database without users, (re)arms the bootstrap token and returns it for printing;
 * returns undefined once the instance has users.
 */
export async function armBootstrap(knex: Knex, fixedToken?: string): Promise<string | undefined> {
  const [{ count }] = await knex('users').count<{ count: number }[]>('* as count');
  if (Number(count) > 0) return undefined;
  const token = fixedToken ?? `boot_${newToken(24)}`;
  const value: BootstrapState = { token_hash: sha256Hex(token), redeemed_at: null };
  await knex('instance_settings')
    .insert({ key: KEY, value: JSON.stringify(value), updated_at: new Date() })
    .onConflict('key')
    .merge();
  return token;
}

/** Checks and consumes the token inside the caller's transaction. */
export async function consumeBootstrap(trx: Knex.Transaction, token: string): Promise<void> {
  const row = await trx('instance_settings').where({ key: KEY }).forUpdate().first();
  const state = row?.value as BootstrapState | undefined;
  if (!state) throw problem('not_found', 'Bootstrap is not armed on this instance');
  if (state.redeemed_at) throw problem('bootstrap_redeemed');
  if (!safeEqual(state.token_hash, sha256Hex(token))) throw problem('unauthorized', 'The bootstrap token is not valid');
  await trx('instance_settings')
    .where({ key: KEY })
    .update({ value: JSON.stringify({ ...state, redeemed_at: new Date().toISOString() }), updated_at: new Date() });
}

/** instance_settings key naming the instance owner: `{userId}` of whoever redeemed the bootstrap token. */
export const INSTANCE_OWNER_KEY = 'instance_owner';

/** Records the bootstrap user as the instance owner, in the redeeming transaction (the instance model serves their organizations). */
export async function recordInstanceOwner(trx: Knex.Transaction, userId: string): Promise<void> {
  await trx('instance_settings')
    .insert({ key: INSTANCE_OWNER_KEY, value: JSON.stringify({ userId }), updated_at: new Date() })
    .onConflict('key')
    .merge();
}
