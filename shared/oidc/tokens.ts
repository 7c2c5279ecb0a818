// Access tokens as credentials (SPEC 5.1, 5.5): ES256 JWTs our authorization server issued for
// the API, verified against our own keys (signature, issuer, audience, expiry). They are not
// looked up: a JWT lives until it expires (one hour), even after a password change (SPEC 5.4).
import { createLocalJWKSet, type JWTPayload, jwtVerify } from 'jose';
import type { Knex } from 'knex';
import { loadSigningKeys, publicJwks } from './keys.ts';
import type { ClientLevel } from './clients.ts';

/** SPEC 8.6: an access token lives one hour. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;

/** The audience of every access token: the service's API. */
export function apiAudience(publicUrl: string): string {
  return `${publicUrl}/api`;
}

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  client_id: string;
  scope?: string;
  /** The client's level, and what an org- or space-level client is bound to. */
  lvl: ClientLevel;
  org_id?: string;
  space_id?: string;
  exp: number;
}

/** A key set is re-read when a token names a key it does not hold (a rotation), at most once a minute. */
const RELOAD_AFTER_MS = 60_000;
let cached: { keys: ReturnType<typeof createLocalJWKSet>; kids: Set<string>; at: number } | undefined;

async function keySet(knex: Knex, secretsKey: Buffer | undefined, kid: string | undefined) {
  if (!cached || (kid && !cached.kids.has(kid) && Date.now() - cached.at > RELOAD_AFTER_MS)) {
    const jwks = publicJwks(await loadSigningKeys(knex, secretsKey));
    cached = { keys: createLocalJWKSet(jwks), kids: new Set(jwks.keys.map((k) => String(k.kid))), at: Date.now() };
  }
  return cached.keys;
}

/** The token's claims, or undefined when it is not a valid access token of this service. */
export async function verifyAccessToken(knex: Knex, config: { publicUrl: string; secretsKey?: Buffer }, token: string): Promise<AccessTokenClaims | undefined> {
  try {
    const kid = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8')).kid as string | undefined;
    const { payload } = await jwtVerify(token, await keySet(knex, config.secretsKey, kid), {
      issuer: config.publicUrl,
      audience: apiAudience(config.publicUrl),
      algorithms: ['ES256'],
      typ: 'at+jwt',
    });
    const claims = payload as AccessTokenClaims;
    if (typeof claims.sub !== 'string' || typeof claims.client_id !== 'string' || !['instance', 'org', 'space'].includes(claims.lvl)) return undefined;
    return claims;
  } catch {
    return undefined;
  }
}
