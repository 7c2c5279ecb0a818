// Draft bookkeeping shared by import, restore and update: comparison with the published
// version and the files that mirror the manifest.
import { isDeepStrictEqual } from 'node:util';
import { type FileMap, type PackageRow, type PackageVersionRow, fileText } from './types.ts';

/** manifest.json as written into a draft after the manifest changed. */
export function manifestFile(manifest: Record<string, unknown>) {
  return { encoding: 'utf8' as const, content: `${JSON.stringify(manifest, null, 2)}\n` };
}

function withoutManifestFile(files: FileMap): FileMap {
  const { 'manifest.json': _m, ...rest } = files;
  return rest;
}

/** True when the draft differs from `latest` (or when nothing is published yet). */
export function hasUnarchivedChanges(pkg: PackageRow, latest: PackageVersionRow | undefined): boolean {
  if (!latest) return true;
  return !isDeepStrictEqual(pkg.draft_manifest, latest.manifest) || !isDeepStrictEqual(withoutManifestFile(pkg.draft_files), withoutManifestFile(latest.files));
}

/**
 * The manifest with its keys in the order the author wrote them. jsonb columns reorder object
 * keys, so the order (which gives `property_order` its default) is read from manifest.json.
 */
export function orderedManifest(stored: Record<string, any>, files: FileMap): Record<string, any> {
  const text = fileText(files, 'manifest.json');
  if (text === undefined) return stored;
  try {
    const parsed = JSON.parse(text);
    return isDeepStrictEqual(parsed, stored) ? parsed : stored;
  } catch {
    return stored;
  }
}
