// Outbound proxies (issue 17): an HTTP(S) forward proxy the organization's model calls go
// through (a model's own `proxyId`, else the organization's default proxy). The URL may carry
// a user and password: the whole URL is stored encrypted and shown without them.
import { EgressError, checkDestination } from '../../../shared/egress.ts';
import { problem } from '../../../shared/errors.ts';
import type { ProxyRow } from '../../../shared/models/model.ts';
import type { AppContext } from '../../context.ts';
import { sealKey } from '../../resources/secrets.ts';

export const proxyFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  url: {
    type: 'string',
    format: 'uri',
    maxLength: 2000,
    description: '`http://` or `https://` forward proxy, optionally `user:password@`; write-only past its host',
  },
  isDefault: { type: 'boolean' },
};

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };

function invalidUrl(message: string) {
  return problem('validation_failed', { detail: `url: ${message}`, errors: [{ field: 'url', code: 'invalid_value', message }] });
}

/** The columns of a proxy URL: checked against the egress policy, sealed, and shown without credentials. */
export async function proxyUrlColumns(ctx: AppContext, raw: string): Promise<Pick<ProxyRow, 'url_enc' | 'display_url' | 'has_credentials'>> {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidUrl('must be an http:// or https:// proxy');
  try {
    await checkDestination(raw, { allowInternalHosts: ctx.services.config.egressAllowInternalHosts });
  } catch (err) {
    if (err instanceof EgressError) throw invalidUrl(err.message);
    throw err;
  }
  const hasCredentials = Boolean(url.username || url.password);
  url.username = '';
  url.password = '';
  return { url_enc: sealKey(ctx, raw), display_url: url.href.replace(/\/$/, ''), has_credentials: hasCredentials };
}
