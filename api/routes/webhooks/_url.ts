import { checkDestination, EgressError } from '../../../shared/egress.ts';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';

/** SPEC 6.3.9: HTTPS only, never a private, loopback, link-local or reserved destination. */
export async function assertWebhookUrl(ctx: AppContext, url: string): Promise<void> {
  try {
    await checkDestination(url, { requireHttps: true, allowInternalHosts: ctx.services.config.egressAllowInternalHosts });
  } catch (err) {
    if (!(err instanceof EgressError)) throw err;
    if (err.reason === 'unresolvable' || err.reason === 'invalid_url') {
      throw problem('validation_failed', { detail: `url: ${err.message}`, errors: [{ field: 'url', code: 'invalid_value', message: err.message }] });
    }
    throw problem('blocked_url', { detail: err.message, param: 'url' });
  }
}
