// What the three import routes share (import, import-bundle, import-github): the answer for
// one imported package, and the steps around `importPackage` for a single package.
import { problem } from '../../../shared/errors.ts';
import { draftEtag } from '../../../shared/packages/etag.ts';
import { importPackage } from '../../../shared/packages/import.ts';
import { type FileMap, fullName, type PackageRow, type PackageType, TYPE_SCOPES } from '../../../shared/packages/types.ts';
import type { AppContext } from '../../context.ts';
import { authorityOf } from '../../resources/packages.ts';

export const importedSchema = {
  type: 'object',
  required: ['packageId', 'type', 'version'],
  properties: { packageId: { type: 'string' }, type: { type: 'string' }, version: { type: 'string' } },
} as const;

/** The caller may write packages of `type` here, and in the home space of one that exists (`canWriteHome`). */
export function importRights(ctx: AppContext) {
  const authority = authorityOf(ctx);
  return {
    may: (type: PackageType) => ctx.state.tenancy!.scopes.has(TYPE_SCOPES[type].write),
    canWriteHome: (pkg: PackageRow) => authority.holds(pkg.home_space_id, TYPE_SCOPES[pkg.type].write),
  };
}

/** Imports one package's files and answers 201 with it and its draft's ETag. */
export async function importOne(ctx: AppContext, files: FileMap, type: PackageType): Promise<void> {
  const t = ctx.state.tenancy!;
  const rights = importRights(ctx);
  const need = TYPE_SCOPES[type].write;
  if (!rights.may(type)) throw problem('forbidden', `Importing a ${type} needs the ${need} permission in this space`);
  const result = await importPackage(ctx.services.knex, {
    orgId: t.org!.id,
    spaceId: t.space!.id,
    userId: ctx.state.auth!.userId,
    files,
    canWriteHome: rights.canWriteHome,
  });
  ctx.status = 201;
  ctx.set('ETag', draftEtag(result.pkg));
  ctx.body = { packageId: fullName(result.pkg), type: result.type, version: result.version };
}
