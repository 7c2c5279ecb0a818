import type { Space } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { narrowScopes } from '../../../shared/identity/access-grants.ts';
import { findSpace, spaceScopes } from '../../../shared/identity/tenancy.ts';
import type { Scope } from '../../../shared/permissions.ts';
import type { AppContext } from '../../context.ts';

/**
 * The path's space and what the caller holds there; 404 when the caller holds nothing. An
 * X-View-As preview (SPEC 5.2) narrows what is held to the previewed role, as on space-scoped
 * routes: an owner previewing `viewer` manages members as a viewer would (not at all).
 */
export async function spaceAccess(ctx: AppContext, spaceId: string, need?: Scope): Promise<{ space: Space; held: ReadonlySet<Scope> }> {
  const tenancy = ctx.state.tenancy!;
  const { knex } = ctx.services;
  const space = await findSpace(knex, tenancy.org!.id, spaceId);
  const role = space ? await spaceScopes(knex, ctx.state.auth!.userId, space, tenancy.orgRole) : null;
  if (!space || !role) throw problem('not_found', 'No such space');
  const held = narrowScopes(role, { viewAs: tenancy.viewAs });
  if (need && !held.has(need)) throw problem('forbidden', `This operation needs the ${need} permission in the space`);
  return { space, held };
}

/** Exactly one of preset_role and custom_role_id. */
export const roleChoiceSchema = {
  oneOf: [
    { required: ['preset_role'], properties: { preset_role: { type: 'string' }, custom_role_id: { type: 'null' } } },
    { required: ['custom_role_id'], properties: { custom_role_id: { type: 'string' }, preset_role: { type: 'null' } } },
  ],
};

export const spaceIdParam = {
  type: 'object',
  required: ['spaceId'],
  properties: { spaceId: { type: 'string', minLength: 1 } },
} as const;
