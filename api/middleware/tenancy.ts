// Context headers (SPEC 5.2, 5.6): which organization and space a request acts in, on whose
// behalf, and with which effective permissions.
import { EndUser, type Organization, type Space } from '../../shared/db/models.ts';
import { Organization as OrgModel } from '../../shared/db/models.ts';
import { assertServable, CURRENT_API_VERSION } from '../../shared/api-version.ts';
import { problem } from '../../shared/errors.ts';
import { findSpace, isOrgAdmin, orgRole, orgScopes, spaceScopes } from '../../shared/identity/tenancy.ts';
import { narrowScopes } from '../../shared/identity/access-grants.ts';
import { withoutDisabledScopes } from '../../shared/modules.ts';
import { type OrgRole, type Scope, SPACE_ROLES, type SpaceRole } from '../../shared/permissions.ts';
import { clientIp } from '../client-ip.ts';
import type { AppContext } from '../context.ts';
import type { RouteDef } from '../route.ts';
import { boundOrgId, boundSpaceId, credentialScopes } from './authenticate.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SPACE_ID = /^spc_[0-9A-Za-z]{24}$/;

/** Header rules that hold on every authenticated route, whatever its context. */
function checkCredentialHeaders(ctx: AppContext): void {
  const auth = ctx.state.auth!;
  const serviceUser = ctx.get('Service-User');
  if (serviceUser) {
    if (auth.kind !== 'api_key') {
      throw problem('header_not_allowed', { detail: 'Service-User can only be sent with an API key', param: 'Service-User' });
    }
    if (!serviceUser.startsWith('eu_')) {
      throw problem('invalid_end_user_id', { detail: 'Service-User must be an end-user id starting with eu_', param: 'Service-User' });
    }
  }
  // A header sent is checked even when empty or ignored: its published shape is enforced.
  const sent = (name: string): string | undefined => {
    const v = ctx.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  if (sent('Service-User') === '') {
    throw problem('invalid_end_user_id', { detail: 'Service-User must be an end-user id starting with eu_', param: 'Service-User' });
  }
  if (sent('Service-Version') === '') assertServable('', 'header');
  // With an API key X-Org-Id is ignored (SPEC 5.2), whatever it holds; X-Space-Id must name a space.
  const spaceHeader = boundSpaceId(auth) ? sent('X-Space-Id') : undefined;
  if (spaceHeader !== undefined && !SPACE_ID.test(spaceHeader)) {
    const message = 'X-Space-Id must be a space id (spc_ and 24 letters or digits)';
    throw problem('validation_failed', { detail: message, param: 'X-Space-Id', errors: [{ field: 'X-Space-Id', code: 'invalid_format', message }] });
  }
  // SPEC 5.2: sessions and instance-level tokens only, and a space role, on every route.
  const viewAs = ctx.get('X-View-As');
  if (viewAs && (auth.kind === 'api_key' || (auth.kind === 'oidc' && auth.level !== 'instance'))) {
    const what = auth.kind === 'api_key' ? 'an API key' : `an ${auth.level}-level access token`;
    throw problem('view_as_unsupported', { detail: `X-View-As cannot be used with ${what}`, param: 'X-View-As' });
  }
  if (viewAs && !SPACE_ROLES.includes(viewAs as SpaceRole)) {
    const message = `X-View-As must be one of ${SPACE_ROLES.join(', ')}`;
    throw problem('validation_failed', { detail: message, param: 'X-View-As', errors: [{ field: 'X-View-As', code: 'invalid_value', message }] });
  }
}

/**
 * The organization or space a request names: the X-Org-Id / X-Space-Id header, or on
 * Server-Sent Events routes the `orgId` / `spaceId` query parameter standing in for it
 * (EventSource cannot send headers). `param` names what was read, for error documents.
 */
function contextValue(ctx: AppContext, route: RouteDef, which: 'org' | 'space'): { value: string; param: string } {
  const header = which === 'org' ? 'X-Org-Id' : 'X-Space-Id';
  if (!route.queryCredentials) return { value: ctx.get(header), param: header };
  const name = which === 'org' ? 'orgId' : 'spaceId';
  const q = ctx.query[name];
  if (typeof q === 'string' && q) return { value: q, param: name };
  return ctx.get(header) ? { value: ctx.get(header), param: header } : { value: '', param: name };
}

async function resolveOrg(ctx: AppContext, route: RouteDef): Promise<{ org: Organization; role: OrgRole }> {
  const auth = ctx.state.auth!;
  const { knex } = ctx.services;
  // An API key, an org- or space-level token is bound to its organization: X-Org-Id is ignored (SPEC 5.2, 5.5).
  const bound = boundOrgId(auth);
  let orgId: string;
  if (bound) {
    orgId = bound;
  } else {
    const { value, param } = contextValue(ctx, route, 'org');
    orgId = value;
    if (!orgId) throw problem('org_required', { detail: `Send ${param} to select the organization`, param });
    if (!UUID.test(orgId)) {
      throw problem('validation_failed', {
        detail: `${param} must be a UUID`,
        param,
        errors: [{ field: param, code: 'invalid_format', message: `${param} must be a UUID` }],
      });
    }
  }
  const access = ctx.state.access!;
  const role = await access.get(`role:${orgId}:${auth.userId}`, () => orgRole(knex, orgId, auth.userId));
  const org = role ? await access.get(`org:${orgId}`, async () => await OrgModel.query(knex).findById(orgId)) : undefined;
  if (!role || !org) {
    // A key whose creator left is revoked (so is a bound token); a session outside the organization contradicts it.
    throw problem(bound ? 'unauthorized' : 'forbidden', 'You are not a member of this organization');
  }
  return { org, role };
}

async function resolveSpace(ctx: AppContext, route: RouteDef, org: Organization, role: OrgRole): Promise<{ space: Space; scopes: ReadonlySet<Scope> }> {
  const auth = ctx.state.auth!;
  const { knex } = ctx.services;
  const { value: header, param } = contextValue(ctx, route, 'space');
  let spaceId: string;
  const pinned = boundSpaceId(auth);
  if (pinned) {
    if (header && header !== pinned) {
      throw problem('forbidden', { detail: `This ${auth.kind === 'api_key' ? 'API key' : 'access token'} is pinned to another space`, param });
    }
    spaceId = pinned;
  } else {
    if (!header) throw problem('space_required', { detail: `This route is space-scoped: send ${param}`, param });
    spaceId = header;
  }
  const access = ctx.state.access!;
  const space = await access.get(`space:${org.id}:${spaceId}`, () => findSpace(knex, org.id, spaceId));
  const held = space ? await access.get(`scopes:${space.id}:${auth.userId}:${role}`, () => spaceScopes(knex, auth.userId, space, role)) : null;
  if (!space || !held) throw problem('not_a_space_member', { detail: `You hold no role in space ${spaceId}`, param });
  return { space, scopes: held };
}

/**
 * The X-View-As role of a caller holding `role` in the organization (its value is checked with the credential headers; the
 * narrowing itself is `narrowScopes`).
 */
export function viewAsRole(ctx: AppContext, role: OrgRole): SpaceRole | undefined {
  const viewAs = ctx.get('X-View-As');
  if (!viewAs) return undefined;
  if (!isOrgAdmin(role)) throw problem('forbidden', { detail: 'Only organization owners and admins can use X-View-As', param: 'X-View-As' });
  return viewAs as SpaceRole;
}

export async function resolveTenancy(ctx: AppContext, route: RouteDef): Promise<void> {
  const auth = ctx.state.auth;
  if (!auth) return;
  checkCredentialHeaders(ctx);
  let version = ctx.get('Service-Version') ? assertServable(ctx.get('Service-Version'), 'header') : undefined;
  if (!route.context) {
    ctx.set('Service-Version', version ?? CURRENT_API_VERSION);
    ctx.state.tenancy = { scopes: new Set() };
    return;
  }
  const { org, role } = await resolveOrg(ctx, route);
  version ??= org.api_version ? assertServable(org.api_version, 'organization pin') : CURRENT_API_VERSION;
  ctx.set('Service-Version', version);

  let scopes: ReadonlySet<Scope>;
  let space: Space | undefined;
  if (route.context === 'space') {
    ({ space, scopes } = await resolveSpace(ctx, route, org, role));
  } else {
    scopes = orgScopes(role);
  }
  const viewAs = viewAsRole(ctx, role);
  // A module left out of MODULES: nobody holds its scopes.
  scopes = withoutDisabledScopes(narrowScopes(scopes, { viewAs, keyScopes: credentialScopes(auth) }), ctx.services.config.modules);

  // A space-level token acts as its end-user (SPEC 5.5), as an API key with Service-User does.
  let endUserId: string | undefined = auth.kind === 'oidc' ? auth.endUserId : undefined;
  const serviceUser = ctx.get('Service-User');
  if (serviceUser && auth.kind === 'api_key') {
    const spaceId = auth.key.space_id;
    const eu = await ctx.state.access!.get(
      `end_user:${spaceId}:${serviceUser}`,
      async () => await EndUser.query(ctx.services.knex).findOne({ id: serviceUser, org_id: org.id, space_id: spaceId }),
    );
    if (!eu) throw problem('invalid_end_user', { detail: `${serviceUser} is not an end-user of this key's space`, param: 'Service-User' });
    endUserId = eu.id;
    const audit = {
      org_id: org.id,
      space_id: auth.key.space_id,
      request_id: ctx.state.requestId,
      key_id: auth.key.id,
      end_user_id: endUserId,
      method: ctx.method,
      path: ctx.path,
      ip: clientIp(ctx, ctx.services.config.trustProxy),
      user_agent: ctx.get('User-Agent').slice(0, 512) || null,
    };
    ctx.services.log.info({ ...audit }, 'impersonated request');
    await ctx.services.knex('impersonation_audit').insert(audit);
  }
  ctx.state.tenancy = { org, orgRole: role, space, scopes, endUserId, viewAs };
  if (route.scope && !scopes.has(route.scope)) {
    throw problem('forbidden', `This operation needs the ${route.scope} permission`);
  }
}
