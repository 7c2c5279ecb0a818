// POST /api/packages/{agents|integrations}/{scope}/{name}/versions/{version}/restore.
import { draftEtag } from '../../../shared/packages/etag.ts';
import { restoreVersion } from '../../../shared/packages/draft-write.ts';
import { representation } from '../../../shared/packages/representation.ts';
import type { PackageType } from '../../../shared/packages/types.ts';
import { versionOrFail } from '../../../shared/packages/store.ts';
import type { AppContext } from '../../context.ts';
import { type PackageParams, ifMatchOf, readablePackage, requireHomeScope, viewOf } from '../../resources/packages.ts';

export async function restore(ctx: AppContext, type: PackageType, params: PackageParams & { version: string }): Promise<void> {
  const pkg = await readablePackage(ctx, params, type);
  await requireHomeScope(ctx, pkg);
  const version = await versionOrFail(ctx.services.knex, pkg, params.version);
  const restored = await restoreVersion(ctx.services.knex, pkg, version, ifMatchOf(ctx));
  ctx.set('ETag', draftEtag(restored));
  ctx.body = await representation(viewOf(ctx), restored);
}

export const restoreDescription =
  'Copies a published version into the draft without creating a version. `version` is exact, the dist-tag `latest` or a semver range. ' +
  "Needs the type's write permission in the package's HOME space (403 without it; 404 when the caller cannot read the package at all). " +
  "Optional `If-Match` with the draft's ETag: stale is 412 and nothing changes; `*` matches any draft. The `ETag` header carries the new draft's.";
