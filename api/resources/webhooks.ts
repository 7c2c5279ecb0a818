// Who may do what with a webhook (SPEC 4.9), for the webhook routes and the console's webhook
// pages: space level needs webhooks:* in that space (an API key only in its own space);
// organization level needs org-webhooks:*, which keys never carry.
import type { Knex } from 'knex';
import { problem } from '../../shared/errors.ts';
import { narrowScopes } from '../../shared/identity/access-grants.ts';
import { findSpace, orgScopes, spaceScopes } from '../../shared/identity/tenancy.ts';
import { withoutDisabledScopes } from '../../shared/modules.ts';
import { intersect, type Scope } from '../../shared/permissions.ts';
import type { WebhookRow } from '../../shared/webhooks/model.ts';
import type { AppContext } from '../context.ts';
import { boundSpaceId, credentialScopes } from '../middleware/authenticate.ts';

export type WebhookAction = 'read' | 'write' | 'delete';

/** What the caller holds in a space of the organization (nothing outside a key's own space). */
export async function scopesInSpace(ctx: AppContext, spaceId: string): Promise<ReadonlySet<Scope>> {
  const auth = ctx.state.auth!;
  const { org, orgRole } = ctx.state.tenancy!;
  const pinned = boundSpaceId(auth);
  if (pinned && pinned !== spaceId) return new Set();
  const space = await findSpace(ctx.services.knex, org!.id, spaceId);
  const held = space ? await spaceScopes(ctx.services.knex, auth.userId, space, orgRole) : null;
  if (!held) return new Set();
  const ceiling = credentialScopes(auth);
  return ceiling ? intersect(ceiling as Scope[], held as Set<Scope>) : held;
}

/**
 * What the caller holds at organization level: the tenancy's scopes on the organization-level
 * webhook routes; on a space's page (the console) the same computation from the organization role.
 */
function orgLevelScopes(ctx: AppContext): ReadonlySet<Scope> {
  const t = ctx.state.tenancy!;
  if (!t.space) return t.scopes;
  return withoutDisabledScopes(
    narrowScopes(orgScopes(t.orgRole), { viewAs: t.viewAs, keyScopes: credentialScopes(ctx.state.auth!) }),
    ctx.services.config.modules,
  );
}

export async function allowed(ctx: AppContext, level: 'space' | 'org', spaceId: string | null, action: WebhookAction): Promise<boolean> {
  if (level === 'org') return orgLevelScopes(ctx).has(`org-webhooks:${action}` as Scope);
  return (await scopesInSpace(ctx, spaceId!)).has(`webhooks:${action}` as Scope);
}

/** The webhook when the caller may read it (404 otherwise) and may do `action` (403 otherwise). */
export async function webhookFor(ctx: AppContext, id: string, action: WebhookAction): Promise<WebhookRow> {
  const hook = (await ctx.services.knex('webhooks').where({ id, org_id: ctx.state.tenancy!.org!.id }).first()) as WebhookRow | undefined;
  if (!hook || !(await allowed(ctx, hook.level, hook.space_id, 'read'))) throw problem('not_found', 'No such webhook');
  if (action !== 'read' && !(await allowed(ctx, hook.level, hook.space_id, action))) {
    throw problem(
      'forbidden',
      `This needs ${hook.level === 'org' ? 'org-webhooks' : 'webhooks'}:${action}${hook.level === 'org' ? ' (sessions only)' : " in the webhook's space"}`,
    );
  }
  return hook;
}

/** The organization's webhooks at organization level (`org`) and of one space (`spaceId`), or none. */
export function webhooksOf(knex: Knex, orgId: string, which: { org: boolean; spaceId: string | null }): Knex.QueryBuilder {
  return knex('webhooks')
    .where({ org_id: orgId })
    .where((w) => {
      w.whereRaw('false');
      if (which.org) w.orWhere({ level: 'org' });
      if (which.spaceId) w.orWhere({ level: 'space', space_id: which.spaceId });
    });
}

export const webhookIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;
