// Package access from a request (shared/packages/README.md): visibility from the request
// space, the type's read scope there (else 404), the type's write scope in the HOME space (else 403).
// Shared by the package, agent and integration slices, with the path parameters they all take.
import { problem } from '../../shared/errors.ts';
import { SpaceAuthority } from '../../shared/packages/authority.ts';
import { parseIfMatch } from '../../shared/packages/etag.ts';
import type { ViewContext } from '../../shared/packages/representation.ts';
import { type PackageRow, type PackageType, TYPE_SCOPES, fullName } from '../../shared/packages/types.ts';
import { findVisiblePackage } from '../../shared/packages/visibility.ts';
import type { AppContext } from '../context.ts';
import { credentialScopes } from '../middleware/authenticate.ts';

export interface PackageParams {
  scope: string;
  name: string;
}

export const scopeParam = { type: 'string', pattern: '^@[a-z0-9][a-z0-9-]*$', maxLength: 100, description: 'Package scope, e.g. `@acme`' } as const;
export const nameParam = { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 113, description: 'Package name without its scope' } as const;
export const versionParam = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: 'Exact version, the dist-tag `latest`, or a semver range',
} as const;

export const packageParams = {
  type: 'object',
  required: ['scope', 'name'],
  properties: { scope: scopeParam, name: nameParam },
} as const;

/** The caller's authority in any space of the organization (memoized for the request). */
export function authorityOf(ctx: AppContext): SpaceAuthority {
  const state = ctx.state as typeof ctx.state & { packageAuthority?: SpaceAuthority };
  if (!state.packageAuthority) {
    const auth = ctx.state.auth!;
    const t = ctx.state.tenancy!;
    state.packageAuthority = new SpaceAuthority(ctx.services.knex, {
      orgId: t.org!.id,
      userId: auth.userId,
      orgRole: t.orgRole,
      keyScopes: credentialScopes(auth) as string[] | undefined,
      viewAs: t.viewAs,
    });
  }
  return state.packageAuthority;
}

export function viewOf(ctx: AppContext): ViewContext {
  const t = ctx.state.tenancy!;
  return {
    knex: ctx.services.knex,
    orgId: t.org!.id,
    spaceId: t.space!.id,
    authority: authorityOf(ctx),
    timeoutCeilingSeconds: ctx.services.config.platformRunLimits.timeout_ceiling_seconds,
  };
}

/** The package, when visible from the request space and readable there; 404 otherwise. */
export async function readablePackage(ctx: AppContext, p: PackageParams, type?: PackageType): Promise<PackageRow> {
  const t = ctx.state.tenancy!;
  const pkg = await findVisiblePackage(ctx.services.knex, t.org!.id, t.space!.id, p.scope, p.name, type);
  if (!pkg || !t.scopes.has(TYPE_SCOPES[pkg.type].read)) {
    throw problem('not_found', `No ${type ?? 'package'} ${p.scope}/${p.name} is visible from this space`);
  }
  return pkg;
}

/** 403 unless the caller holds the type's write (or delete) scope in the package's HOME space. */
export async function requireHomeScope(ctx: AppContext, pkg: PackageRow, kind: 'write' | 'delete' = 'write'): Promise<void> {
  const need = TYPE_SCOPES[pkg.type][kind];
  if (!(await authorityOf(ctx).holds(pkg.home_space_id, need))) {
    throw problem('forbidden', `Changing ${fullName(pkg)} needs the ${need} permission in its home space ${pkg.home_space_id}`);
  }
}

export function ifMatchOf(ctx: AppContext): '*' | string[] | undefined {
  return parseIfMatch(ctx.get('If-Match') || undefined);
}
