// API keys as the routes and the console's key pages see them: the caller as a key holder in its
// space (shared/identity/api-keys.ts decides what it may create and revoke).
import type { KeyHolder } from '../../shared/identity/api-keys.ts';
import type { AppContext } from '../context.ts';

export function keyHolder(ctx: AppContext): KeyHolder {
  const { org, space, orgRole, scopes } = ctx.state.tenancy!;
  return { orgId: org!.id, space: space!, orgRole, userId: ctx.state.auth!.userId, scopes, modules: ctx.services.config.modules };
}
