// Outbound proxies as route slices use them: the proxy a request names (a proxy route's path,
// a model's `proxyId`), read within the caller's organization.
import { problem } from '../../shared/errors.ts';
import type { ProxyRow } from '../../shared/models/model.ts';
import type { AppContext } from '../context.ts';

/** The organization's proxy with this id; another organization's (or none) is 404 (naming `param` when the id came in a body field). */
export async function orgProxy(ctx: AppContext, id: string, param?: string): Promise<ProxyRow> {
  const row = await ctx.services.knex<ProxyRow>('proxies').where({ id, org_id: ctx.state.tenancy!.org!.id }).first();
  if (!row) throw problem('not_found', { detail: 'No such proxy', param });
  return row;
}
