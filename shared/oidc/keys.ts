// The authorization server's signing keys (DESIGN.md section 7): ES256, generated at first start,
// stored sealed under SECRETS_KEY. Rotation: retire the signing key (`retired_at`), and the next
// start generates a new one; retired keys stay published in the JWKS (verification only) so
// tokens they signed live out their hour. Delete a retired key once its tokens have expired.
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Knex } from 'knex';
import { randomBase62 } from '../ids.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';

/** Private JWKs, the signing key first (oidc-provider signs with the first key of an algorithm). */
export async function loadSigningKeys(knex: Knex, secretsKey: Buffer | undefined): Promise<JWK[]> {
  const active = await knex('oidc_keys').whereNull('retired_at').first('kid');
  if (!active) {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: randomBase62(16), alg: 'ES256', use: 'sig' };
    await knex('oidc_keys').insert({ kid: jwk.kid, jwk_sealed: encryptSecret(secretsKey, JSON.stringify(jwk)) });
  }
  // Active keys newest first, then retired ones; two API processes starting at once may both
  // generate one: both are published, the newest signs.
  const rows = await knex('oidc_keys').orderByRaw('retired_at IS NOT NULL, created_at DESC').select('jwk_sealed');
  return rows.map((r) => JSON.parse(decryptSecret(secretsKey, r.jwk_sealed)) as JWK);
}

/** The public half of each key, as published at /api/auth/jwks. */
export function publicJwks(keys: JWK[]): { keys: JWK[] } {
  return { keys: keys.map(({ d: _d, ...pub }) => pub) };
}
