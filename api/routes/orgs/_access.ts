import { problem } from '../../../shared/errors.ts';
import { isOrgAdmin, orgRole } from '../../../shared/identity/tenancy.ts';
import type { OrgRole } from '../../../shared/permissions.ts';
import { viewAsRole } from '../../middleware/tenancy.ts';
import type { AppContext } from '../../context.ts';

/**
 * The caller's role in the path's organization: 404 when not a member (cannot read it). An
 * owner or admin previewing a space role (X-View-As, checked as on every route) acts as what
 * someone holding that role is in the organization: a `member`.
 */
export async function callerOrgRole(ctx: AppContext, orgId: string, opts: { admin?: boolean } = {}): Promise<OrgRole> {
  const held = await orgRole(ctx.services.knex, orgId, ctx.state.auth!.userId);
  if (!held) throw problem('not_found', 'No such organization');
  const role: OrgRole = viewAsRole(ctx, held) ? 'member' : held;
  if (opts.admin && !isOrgAdmin(role)) throw problem('forbidden', 'Only organization owners and admins can do this');
  return role;
}

export const orgIdParam = {
  type: 'object',
  required: ['orgId'],
  properties: { orgId: { type: 'string', format: 'uuid' } },
} as const;
