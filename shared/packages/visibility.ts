// Which packages a space sees (./README.md, "Visibility"): a package belongs to an
// organization and has a HOME space; from a space it is visible when its home is that space or
// the organization's default space (shared with every space). Everything else is not found.
// Inline-run (ephemeral) packages belong to their run alone: no space sees them by name.
import type { Knex } from 'knex';
import type { PackageRow } from './types.ts';

/** Id of the organization's default space. */
export async function defaultSpaceId(knex: Knex, orgId: string): Promise<string | undefined> {
  const row = await knex('spaces').select('id').where({ org_id: orgId, kind: 'default' }).first();
  return row?.id;
}

/** Home spaces whose packages `spaceId` sees: itself and the default space. */
export async function visibleHomes(knex: Knex, orgId: string, spaceId: string): Promise<string[]> {
  const def = await defaultSpaceId(knex, orgId);
  return def && def !== spaceId ? [spaceId, def] : [spaceId];
}

/** The published version names of the row `packages` of a query, as a SQL expression (a text array). */
export const VERSION_NAMES_SQL = 'array(select v.version from package_versions v where v.package_id = packages.id)';

/** Query of every package visible from `spaceId` (callers add their own filters). */
export function visiblePackagesQuery(knex: Knex, orgId: string, spaceId: string): Knex.QueryBuilder {
  return knex('packages')
    .where('packages.org_id', orgId)
    .where('packages.ephemeral', false)
    .where((w) =>
      w.where('packages.home_space_id', spaceId).orWhereIn('packages.home_space_id', knex('spaces').select('id').where({ org_id: orgId, kind: 'default' })),
    );
}

/** The same visibility rule as every package read route. */
export async function findVisiblePackage(
  knex: Knex,
  orgId: string,
  spaceId: string,
  scope: string,
  name: string,
  type?: string,
): Promise<PackageRow | undefined> {
  return (await visiblePackageQuery(knex, orgId, spaceId, scope, name, type).select('packages.*').first()) as PackageRow | undefined;
}

/** Query of the package `scope/name` (of `type`, when given) visible from `spaceId`; the caller selects. */
export function visiblePackageQuery(knex: Knex, orgId: string, spaceId: string, scope: string, name: string, type?: string): Knex.QueryBuilder {
  const q = visiblePackagesQuery(knex, orgId, spaceId).where({ 'packages.scope': scope, 'packages.name': name });
  if (type) q.where('packages.type', type);
  return q;
}
