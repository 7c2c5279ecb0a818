// Writes to a package draft (restore, skill update) under optimistic concurrency: the row is
// locked, `If-Match` compared with the current strong ETag, then the revision bumped.
import type { Knex } from 'knex';
import { problem } from '../errors.ts';
import { manifestFile } from './draft.ts';
import { draftEtag, ifMatchAllows } from './etag.ts';
import { validateManifest } from './manifest-schema.ts';
import type { FileMap, PackageRow, PackageVersionRow } from './types.ts';

type IfMatch = '*' | string[] | undefined;

async function lockForWrite(trx: Knex, pkg: PackageRow, ifMatch: IfMatch): Promise<PackageRow> {
  const current = (await trx('packages').where({ id: pkg.id }).forUpdate().first()) as PackageRow;
  if (ifMatch !== undefined && !ifMatchAllows(ifMatch, draftEtag(current))) {
    throw problem('precondition_failed', { detail: `The draft changed: its ETag is now ${draftEtag(current)}`, param: 'If-Match' });
  }
  return current;
}

async function saveDraft(trx: Knex, id: string, manifest: Record<string, unknown>, files: FileMap): Promise<PackageRow> {
  const [row] = (await trx('packages')
    .where({ id })
    .update({
      draft_manifest: JSON.stringify(manifest),
      draft_files: JSON.stringify(files),
      draft_revision: trx.raw('draft_revision + 1'),
      updated_at: trx.fn.now(),
    })
    .returning('*')) as PackageRow[];
  return row;
}

/** Copies a published version into the draft; agents refuse while runs are pending or running. */
export async function restoreVersion(knex: Knex, pkg: PackageRow, version: PackageVersionRow, ifMatch: IfMatch): Promise<PackageRow> {
  return knex.transaction(async (trx) => {
    await lockForWrite(trx, pkg, ifMatch);
    if (pkg.type === 'agent') {
      const [{ n }] = await trx('runs').where({ package_id: pkg.id }).whereIn('status', ['pending', 'running']).count<{ n: string }[]>({ n: '*' });
      if (Number(n) > 0) throw problem('runs_in_progress', `The agent has ${n} pending or running run(s); restore once they finish`);
    }
    return saveDraft(trx, pkg.id, version.manifest, version.files);
  });
}

export interface SkillPatch {
  manifest?: Record<string, unknown>;
  content?: string;
}

/** Updates a skill draft's manifest and/or SKILL.md; the manifest keeps the package's name and type. */
export async function updateSkillDraft(knex: Knex, pkg: PackageRow, patch: SkillPatch, ifMatch: '*' | string[]): Promise<PackageRow> {
  if (patch.manifest !== undefined) {
    const m = validateManifest(patch.manifest, 'skill');
    if (m.name !== pkg.draft_manifest.name) {
      throw problem('validation_failed', {
        detail: `manifest.name cannot change (${pkg.draft_manifest.name})`,
        errors: [{ field: 'manifest.name', code: 'invalid_value', message: `manifest.name must stay ${pkg.draft_manifest.name}` }],
      });
    }
  }
  return knex.transaction(async (trx) => {
    const current = await lockForWrite(trx, pkg, ifMatch);
    const manifest = (patch.manifest ?? current.draft_manifest) as Record<string, unknown>;
    const files: FileMap = { ...current.draft_files, 'manifest.json': manifestFile(manifest) };
    if (patch.content !== undefined) files['SKILL.md'] = { encoding: 'utf8', content: patch.content };
    if (patch.manifest === undefined) files['manifest.json'] = current.draft_files['manifest.json'] ?? files['manifest.json'];
    return saveDraft(trx, pkg.id, manifest, files);
  });
}
