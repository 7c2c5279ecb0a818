// `version` selectors in paths and queries: exact, `latest`, or a semver range.
import type { Knex } from 'knex';
import { problem } from '../../../shared/errors.ts';
import { findVersion } from '../../../shared/packages/store.ts';
import { type PackageRow, type PackageVersionRow, fullName } from '../../../shared/packages/types.ts';
import { isVersionSelector } from '../../../shared/packages/versions.ts';

/** The published version `selector` designates: 400 for a malformed selector, 404 for no match. */
export async function versionOrFail(knex: Knex, pkg: PackageRow, selector: string, where: 'path' | 'query' = 'path'): Promise<PackageVersionRow> {
  if (!isVersionSelector(selector)) {
    const message = 'version must be an exact version, latest, or a semver range';
    throw problem('validation_failed', { detail: message, param: where === 'query' ? 'version' : undefined, errors: [{ field: 'version', code: 'invalid_format', message }] });
  }
  const version = await findVersion(knex, pkg.id, selector);
  if (!version) throw problem('not_found', `${fullName(pkg)} has no published version matching ${selector}`);
  return version;
}
