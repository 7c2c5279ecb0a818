import { problem } from '../errors.ts';
import type { ModelProvider } from './resolve.ts';

/**
 * A stored key goes only where it was sent with (DESIGN.md 5, issue 28): a request that changes
 * `provider` or `baseUrl` of a model or credential holding a key must send `apiKey` too, else
 * someone who may write it but never read the key could send it to a host of their own.
 * `stored` is the row as it is now (read for update).
 */
export function assertKeyFollowsDestination(
  body: { provider?: ModelProvider; baseUrl?: string; apiKey?: string | null },
  stored: { provider: ModelProvider; base_url: string; api_key_enc: string | null },
): void {
  if (stored.api_key_enc === null || body.apiKey !== undefined) return;
  const moved =
    (body.provider !== undefined && body.provider !== stored.provider) || (body.baseUrl !== undefined && body.baseUrl.replace(/\/$/, '') !== stored.base_url);
  if (!moved) return;
  const message = 'is required with a new provider or baseUrl: the stored key is never sent anywhere else';
  throw problem('validation_failed', { detail: `apiKey: ${message}`, errors: [{ field: 'apiKey', code: 'required', message }] });
}
