// Reads of published versions, and of the skill packages agents depend on.
import type { Knex } from 'knex';
import { prepared } from '../db/prepared.ts';
import { problem } from '../errors.ts';
import { type FileMap, type PackageRow, type PackageVersionRow, fullName, splitName } from './types.ts';
import { isVersionSelector, latestOf, pickVersion } from './versions.ts';

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

/**
 * The published version a `version` selector (path or query) designates: 400 for a malformed
 * selector, 404 for no match.
 */
export async function versionOrFail(knex: Knex, pkg: PackageRow, selector: string, where: 'path' | 'query' = 'path'): Promise<PackageVersionRow> {
  if (!isVersionSelector(selector)) {
    const message = 'version must be an exact version, latest, or a semver range';
    throw problem('validation_failed', {
      detail: message,
      param: where === 'query' ? 'version' : undefined,
      errors: [{ field: 'version', code: 'invalid_format', message }],
    });
  }
  const version = await findVersion(knex, pkg.id, selector);
  if (!version) throw problem('not_found', `${fullName(pkg)} has no published version matching ${selector}`);
  return version;
}

/** The latest published version; `names`: its version names when the caller read them already. */
export async function latestVersion(knex: Knex, packageId: string, names?: string[]): Promise<PackageVersionRow | undefined> {
  const chosen = latestOf(names ?? (await versionNames(knex, packageId)));
  return chosen ? getVersion(knex, packageId, chosen) : undefined;
}

/** A skill dependency `@scope/name`, looked up in the whole organization (inline packages excluded). */
export async function findOrgSkill(knex: Knex, orgId: string, id: string): Promise<PackageRow | undefined> {
  const parts = splitName(id);
  if (!parts) return undefined;
  return (await knex('packages').where({ org_id: orgId, scope: parts.scope, name: parts.name, type: 'skill', ephemeral: false }).first()) as
    | PackageRow
    | undefined;
}

/**
 * Every file of each skill version an agent resolved (`{id, version}`), for agents that run code:
 * their sandbox holds them (DESIGN.md 9). A skill deleted since is left out.
 */
export async function skillFiles(knex: Knex, orgId: string, skills: Array<{ id: string; version: string }>): Promise<Array<{ id: string; files: FileMap }>> {
  const out: Array<{ id: string; files: FileMap }> = [];
  for (const skill of skills) {
    const pkg = await findOrgSkill(knex, orgId, skill.id);
    const version = pkg ? await getVersion(knex, pkg.id, skill.version) : undefined;
    if (version) out.push({ id: skill.id, files: version.files });
  }
  return out;
}
