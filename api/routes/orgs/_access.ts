import { problem } from '../../../shared/errors.ts';
import { isOrgAdmin, orgRole } from '../../../shared/identity/tenancy.ts';
import type { OrgRole } from '../../../shared/permissions.ts';
import type { AppContext } from '../../route.ts';

/** The caller's role in the path's organization: 404 when not a member (cannot read it). */
export async function callerOrgRole(ctx: AppContext, orgId: string, opts: { admin?: boolean } = {}): Promise<OrgRole> {
  const role = await orgRole(ctx.services.knex, orgId, ctx.state.auth!.userId);
  if (!role) throw problem('not_found', 'No such organization');
  if (opts.admin && !isOrgAdmin(role)) throw problem('forbidden', 'Only organization owners and admins can do this');
  return role;
}

export const orgIdParam = {
  type: 'object',
  required: ['orgId'],
  properties: { orgId: { type: 'string', format: 'uuid' } },
} as const;
