// Reads of published versions, and of the skill packages agents depend on.
import type { Knex } from 'knex';
import { prepared } from '../db/prepared.ts';
import { type PackageRow, type PackageVersionRow, splitName } from './types.ts';
import { latestOf, pickVersion } from './versions.ts';

export async function versionNames(knex: Knex, packageId: string): Promise<string[]> {
  const rows = await knex('package_versions').select('version').where({ package_id: packageId });
  return rows.map((r: { version: string }) => r.version);
}

export async function getVersion(knex: Knex, packageId: string, version: string): Promise<PackageVersionRow | undefined> {
  return (await prepared('package-version', knex('package_versions').where({ package_id: packageId, version }).first())) as PackageVersionRow | undefined;
}

/** The version `selector` designates (see pickVersion), with its manifest and files. */
export async function findVersion(knex: Knex, packageId: string, selector?: string): Promise<PackageVersionRow | undefined> {
  const chosen = pickVersion(await versionNames(knex, packageId), selector);
  return chosen ? getVersion(knex, packageId, chosen) : undefined;
}

export async function latestVersion(knex: Knex, packageId: string): Promise<PackageVersionRow | undefined> {
  const chosen = latestOf(await versionNames(knex, packageId));
  return chosen ? getVersion(knex, packageId, chosen) : undefined;
}

/** A skill dependency `@scope/name`, looked up in the whole organization (inline packages excluded). */
export async function findOrgSkill(knex: Knex, orgId: string, id: string): Promise<PackageRow | undefined> {
  const parts = splitName(id);
  if (!parts) return undefined;
  return (await knex('packages').where({ org_id: orgId, scope: parts.scope, name: parts.name, type: 'skill', ephemeral: false }).first()) as PackageRow | undefined;
}
