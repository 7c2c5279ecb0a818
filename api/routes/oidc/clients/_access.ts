// Who may see and change an OAuth client (DESIGN.md section 7), and the fields a request sets
// (its representation is shared/oidc/model.ts). Every client belongs to the organization that
// manages it; a space-level one is visible only to callers who can act in its space (an API key:
// its own space), an instance-level one is changed only by an organization owner's session.
import { problem } from '../../../../shared/errors.ts';
import { findSpace, spaceScopes } from '../../../../shared/identity/tenancy.ts';
import { type ClientLevel, OIDC_SCOPES, type OAuthClientRow, redirectUriProblem, scopesBeyondLevel } from '../../../../shared/oidc/clients.ts';
import { SCOPES } from '../../../../shared/permissions.ts';
import { boundSpaceId } from '../../../middleware/authenticate.ts';
import type { AppContext } from '../../../context.ts';

/** Whether the caller holds any role in the space of its organization (a key or space-bound token: only its own space). */
export async function canActInSpace(ctx: AppContext, spaceId: string): Promise<boolean> {
  const auth = ctx.state.auth!;
  const { org, orgRole } = ctx.state.tenancy!;
  const pinned = boundSpaceId(auth);
  if (pinned && pinned !== spaceId) return false;
  const space = await findSpace(ctx.services.knex, org!.id, spaceId);
  return Boolean(space && (await spaceScopes(ctx.services.knex, auth.userId, space, orgRole)));
}

/**
 * Instance-level clients act for any user of the instance: only an owner, in person (a session,
 * not an API key or a token delegated to an application), manages them.
 */
export function assertMayManageInstanceClients(ctx: AppContext): void {
  if (ctx.state.auth!.kind !== 'session' || ctx.state.tenancy!.orgRole !== 'owner') {
    throw problem('forbidden', 'Instance-level clients are managed by an organization owner with a session (not an API key or access token)');
  }
}

/** The organization's client when the caller may read it (404 otherwise); writes to an instance-level one need an owner (403). */
export async function clientFor(ctx: AppContext, id: string, action: 'read' | 'write'): Promise<OAuthClientRow> {
  const row = (await ctx.services.knex('oauth_clients').where({ id, org_id: ctx.state.tenancy!.org!.id }).first()) as OAuthClientRow | undefined;
  if (!row || (row.level === 'space' && !(await canActInSpace(ctx, row.space_id!)))) throw problem('not_found', 'No such OAuth client');
  if (action === 'write' && row.level === 'instance') assertMayManageInstanceClients(ctx);
  return row;
}

/** 400 `validation_failed` naming each redirect URI that is not https (or http to loopback) or carries a fragment. */
export function assertRedirectUris(uris: readonly string[]): void {
  const errors = uris.flatMap((uri, i) => {
    const why = redirectUriProblem(uri);
    return why ? [{ field: `redirect_uris.${i}`, code: 'invalid_value', message: `redirect_uris.${i} ${why}` }] : [];
  });
  if (errors.length) throw problem('validation_failed', { detail: errors[0].message, errors });
}

/** 400 `invalid_request` naming the permissions a client of this level cannot be granted (SPEC 5.5). */
export function assertScopesForLevel(level: ClientLevel, scopes: readonly string[]): void {
  const beyond = scopesBeyondLevel(level, scopes);
  if (beyond.length) {
    throw problem('invalid_request', {
      detail: `A ${level}-level client cannot be granted ${beyond.join(', ')}`,
      errors: beyond.map((s) => ({ field: 'scopes', code: 'not_grantable', message: `${s} cannot be granted to a ${level}-level client` })),
    });
  }
}

const DNS_NAME = '([A-Za-z0-9-]{1,63}\\.)*[A-Za-z0-9-]{0,62}[A-Za-z][A-Za-z0-9-]{0,62}';
const IPV4 = '((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const PORT = '([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';

/** Fields shared by create and update; URIs and level-specific scopes are checked in the handler. */
export const clientFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  redirect_uris: {
    type: 'array',
    maxItems: 20,
    uniqueItems: true,
    // The pattern publishes the rule; redirectUriProblem() also parses each URL.
    // The host is ASCII (an IDN in its xn-- form), a name whose last label holds a letter or a
    // dotted IPv4 address, so that every string the pattern admits is one WHATWG URL parses.
    items: {
      type: 'string',
      maxLength: 2000,
      pattern: `^(https://(${DNS_NAME}|${IPV4})|http://(localhost|127\\.0\\.0\\.1|\\[::1\\]))(:${PORT})?([/?][^#\\s]*)?$`,
    },
    description: 'Absolute https URLs (http only for localhost, 127.0.0.1, [::1]; RFC 8252), no fragment. Empty: the device flow only.',
  },
  scopes: {
    type: 'array',
    uniqueItems: true,
    items: { type: 'string', enum: [...OIDC_SCOPES, ...SCOPES] },
    description:
      'Permissions the client may ask for. The OpenID scopes openid, offline_access, email, profile are always allowed: they may ' +
      'be listed (as OIDC libraries do), which changes nothing, and are not stored. A space-level client: at most agents:read, ' +
      'agents:run, runs:read, runs:cancel, end-users:read, integrations:read, integrations:connect, integrations:disconnect.',
  },
  allowSignup: { type: 'boolean', description: 'Space level: a first sign-in creates the end-user. No effect at other levels.' },
} as const;

export const clientIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;
