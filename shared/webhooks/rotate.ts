// Rotating a webhook's signing secret (SPEC 4.9): `POST /api/webhooks/{id}/rotate` and the
// console's rotate button. During the window both secrets sign every delivery; after it only the
// new one does. The new secret is returned to be shown once; only its sealed form is kept.
import type { Knex } from 'knex';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import type { WebhookRow } from './model.ts';
import { generateWebhookSecret } from './signature.ts';

export const DEFAULT_ROTATION_WINDOW_SECONDS = 604_800;
export const MAX_ROTATION_WINDOW_SECONDS = 30 * 86_400;

export async function rotateWebhookSecret(
  knex: Knex,
  secretsKey: Buffer | undefined,
  hook: Pick<WebhookRow, 'id' | 'org_id' | 'secret_enc'>,
  windowSeconds = DEFAULT_ROTATION_WINDOW_SECONDS,
): Promise<{ secret: string; secretPrevious: string; rotationWindowEndsAt: string }> {
  const previous = decryptSecret(secretsKey, hook.secret_enc);
  const secret = generateWebhookSecret();
  const endsAt = new Date(Date.now() + windowSeconds * 1000);
  await knex('webhooks')
    .where({ id: hook.id, org_id: hook.org_id })
    .update({ secret_enc: encryptSecret(secretsKey, secret), secret_previous_enc: hook.secret_enc, rotation_window_ends_at: endsAt, updated_at: new Date() });
  return { secret, secretPrevious: previous, rotationWindowEndsAt: endsAt.toISOString() };
}
