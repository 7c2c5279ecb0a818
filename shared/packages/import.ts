// Importing an archive: validate, then publish `manifest.version` and refresh the draft in one
// transaction (DESIGN.md 5: versions are immutable; the same version again is 409).
import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/errors.ts';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { validateManifest } from './manifest-schema.ts';
import { promptTemplateErrors } from './prompt-template.ts';
import { MAIN_FILE, type FileMap, type PackageRow, type PackageType, fileText, splitName } from './types.ts';
import { visibleHomes } from './visibility.ts';

export interface ImportRequest {
  orgId: string;
  /** The request space: home of a new package. */
  spaceId: string;
  userId: string;
  files: FileMap;
  /** Whether the caller may write in an existing package's home space. */
  canWriteHome(pkg: PackageRow): Promise<boolean>;
}

export interface ImportResult {
  pkg: PackageRow;
  type: PackageType;
  version: string;
  created: boolean;
}

/** The manifest of an archive, validated, with the type's main file present. */
export function manifestOf(files: FileMap): Record<string, any> & { type: PackageType } {
  const raw = fileText(files, 'manifest.json');
  if (raw === undefined) throw problem('invalid_archive', 'The archive has no manifest.json at its root');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw problem('invalid_archive', `manifest.json is not valid JSON: ${(err as Error).message}`);
  }
  const manifest = validateManifest(parsed);
  const main = MAIN_FILE[manifest.type];
  if (main && files[main]?.encoding !== 'utf8') {
    throw problem('invalid_archive', files[main] ? `${main} must be UTF-8 text` : `A ${manifest.type} archive needs ${main} at its root`);
  }
  // An agent's prompt is a template (DESIGN.md 5); SKILL.md is not.
  if (manifest.type === 'agent') {
    const errors = promptTemplateErrors(files[main!].content, main!);
    if (errors.length) throw problem('validation_failed', { detail: errors[0].message, errors });
  }
  return manifest;
}

export async function importPackage(knex: Knex, req: ImportRequest): Promise<ImportResult> {
  const manifest = manifestOf(req.files);
  const { scope, name } = splitName(manifest.name)!;
  const version: string = manifest.version;
  try {
    return await knex.transaction(async (trx) => {
      const existing = (await trx('packages').where({ org_id: req.orgId, scope, name, ephemeral: false }).forUpdate().first()) as PackageRow | undefined;
      if (!existing) {
        const [pkg] = (await trx('packages')
          .insert({
            id: newId('pkg'),
            org_id: req.orgId,
            scope,
            name,
            type: manifest.type,
            home_space_id: req.spaceId,
            created_by: req.userId,
            draft_manifest: JSON.stringify(manifest),
            draft_files: JSON.stringify(req.files),
            draft_revision: 1,
          })
          .returning('*')) as PackageRow[];
        await insertVersion(trx, pkg, version, manifest, req);
        return { pkg, type: manifest.type, version, created: true };
      }
      if (!(await visibleHomes(trx, req.orgId, req.spaceId)).includes(existing.home_space_id)) {
        throw problem('conflict', `The name ${manifest.name} is taken in this organization`);
      }
      if (existing.type !== manifest.type) {
        throw problem('conflict', `${manifest.name} is a package of type ${existing.type}, not ${manifest.type}`);
      }
      if (!(await req.canWriteHome(existing))) {
        throw problem('forbidden', `Publishing ${manifest.name} needs the write permission in its home space`);
      }
      const taken = await trx('package_versions').where({ package_id: existing.id, version }).first();
      if (taken) throw problem('version_exists', `${manifest.name}@${version} is already published; bump manifest.version`);
      await insertVersion(trx, existing, version, manifest, req);
      const [pkg] = (await trx('packages')
        .where({ id: existing.id })
        .update({
          draft_manifest: JSON.stringify(manifest),
          draft_files: JSON.stringify(req.files),
          draft_revision: trx.raw('draft_revision + 1'),
          updated_at: trx.fn.now(),
        })
        .returning('*')) as PackageRow[];
      return { pkg, type: manifest.type, version, created: false };
    });
  } catch (err) {
    // Two first imports of one name racing: the loser sees the unique index.
    if (isUniqueViolation(err)) throw problem('version_exists', `${manifest.name}@${version} was published concurrently`);
    throw err;
  }
}

async function insertVersion(trx: Knex, pkg: PackageRow, version: string, manifest: Record<string, any>, req: ImportRequest) {
  await trx('package_versions').insert({
    package_id: pkg.id,
    version,
    org_id: req.orgId,
    manifest: JSON.stringify(manifest),
    files: JSON.stringify(req.files),
    created_by: req.userId,
  });
}
