// The access grant a space-scoped request holds (shared/identity/access-grants.ts): what the
// run visibility filter, long-lived reads and the LLM proxy check a caller against.
import type { AccessGrant } from '../shared/identity/access-grants.ts';
import type { AppContext } from './context.ts';

/** The grant behind an authenticated space-scoped request, as it stands now. */
export function grantOf(ctx: AppContext): AccessGrant {
  const auth = ctx.state.auth!;
  const { org, space, endUserId, viewAs } = ctx.state.tenancy!;
  return {
    kind: auth.kind,
    credentialId: auth.kind === 'api_key' ? auth.key.id : auth.kind === 'oidc' ? auth.clientId : auth.session.id,
    tokenScopes: auth.kind === 'oidc' ? auth.scopes : undefined,
    userId: auth.userId,
    orgId: org!.id,
    spaceId: space!.id,
    endUserId,
    viewAs,
    expiresAt: auth.kind === 'api_key' ? auth.key.expires_at : auth.kind === 'oidc' ? auth.expiresAt : auth.session.expires_at,
  };
}
