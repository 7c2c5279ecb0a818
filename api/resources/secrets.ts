// Secrets a route stores or uses (model keys, proxy URLs, OAuth client secrets), sealed and
// unsealed under SECRETS_KEY (shared/secrets.ts). Without the key, the request is 503
// `service_unavailable` naming it.
import { problem } from '../../shared/errors.ts';
import { decryptSecret, encryptSecret, SecretsUnavailableError } from '../../shared/secrets.ts';
import type { AppContext } from '../context.ts';

export function sealKey(ctx: AppContext, apiKey: string): string {
  try {
    return encryptSecret(ctx.services.config.secretsKey, apiKey);
  } catch (err) {
    if (err instanceof SecretsUnavailableError) throw problem('service_unavailable', err.message);
    throw err;
  }
}

/** A stored secret, decrypted for one outbound call. */
export function unseal(ctx: AppContext, sealed: string): string {
  try {
    return decryptSecret(ctx.services.config.secretsKey, sealed);
  } catch (err) {
    if (err instanceof SecretsUnavailableError) throw problem('service_unavailable', err.message);
    throw err;
  }
}
