// Outbound proxies (issue 17): an HTTP(S) forward proxy the organization's model calls go
// through (a model's own `proxyId`, else the organization's default proxy). The URL may carry
// a user and password: the whole URL is stored encrypted and shown without them.
import { EgressError, checkDestination } from '../../../shared/egress.ts';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';
import { sealKey } from '../models/_shared.ts';

export interface ProxyRow {
  id: string;
  org_id: string;
  name: string;
  url_enc: string;
  display_url: string;
  has_credentials: boolean;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

export const proxySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['object', 'id', 'name', 'url', 'hasCredentials', 'isDefault', 'createdAt', 'updatedAt'],
  properties: {
    object: { const: 'proxy' },
    id: { type: 'string' },
    name: { type: 'string' },
    url: { type: 'string', description: 'The proxy URL without its user and password' },
    hasCredentials: { type: 'boolean', description: 'The URL carries a user or password (write-only)' },
    isDefault: { type: 'boolean', description: "The organization's models without a `proxyId` use it" },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export const proxyFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  url: { type: 'string', format: 'uri', maxLength: 2000, description: '`http://` or `https://` forward proxy, optionally `user:password@`; write-only past its host' },
  isDefault: { type: 'boolean' },
};

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };

export function proxyDto(row: ProxyRow) {
  return {
    object: 'proxy' as const,
    id: row.id,
    name: row.name,
    url: row.display_url,
    hasCredentials: row.has_credentials,
    isDefault: row.is_default,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

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

/** The organization's proxy `id`; another organization's (or none) is 404. */
/** The organization's proxy with this id, or 404 (naming `param` when the id came in a body field). */
export async function orgProxy(ctx: AppContext, id: string, param?: string): Promise<ProxyRow> {
  const row = await ctx.services.knex<ProxyRow>('proxies').where({ id, org_id: ctx.state.tenancy!.org!.id }).first();
  if (!row) throw problem('not_found', { detail: 'No such proxy', param });
  return row;
}
