import { problem } from '../../../shared/errors.ts';
import { ARCHIVE_LIMITS, readArchive } from '../../../shared/packages/archive.ts';
import { importBundle, importOrder, splitBundle } from '../../../shared/packages/bundle.ts';
import { TYPE_SCOPES, fullName } from '../../../shared/packages/types.ts';
import { defineRoute } from '../../route.ts';
import { importedSchema, importRights } from './_import.ts';
import { readUploadedFile } from './_multipart.ts';

export default defineRoute({
  method: 'post',
  path: '/api/packages/import-bundle',
  operationId: 'importPackageBundle',
  summary: 'Import several packages from one archive, all or none',
  description:
    'Multipart field `file`: a zip (same limits as `import`: 10 MiB, 200 entries, 20 MiB inflated) with one top-level folder ' +
    'per package, each holding `manifest.json` at its root plus `prompt.md` (agent) or `SKILL.md` (skill); files at the root ' +
    'of the zip are ignored. ' +
    'Every package is validated before anything is written, then all are published in one transaction, a package after the bundled packages it depends on. ' +
    'Any refusal writes nothing and names the package (`errors[].field` starts with its folder, `errors[].packageId` names it once known). ' +
    "Needs each package type's write permission in the request space, and in the home space of a package that already exists.",
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  streamBody: {
    contentType: 'multipart/form-data',
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'The zip archive of the bundle' } } },
  },
  responses: {
    201: {
      description: 'Every package published, in the order they were imported',
      schema: {
        type: 'object',
        required: ['packages'],
        properties: {
          packages: {
            type: 'array',
            items: importedSchema,
          },
        },
      },
    },
  },
  async handler(ctx) {
    const t = ctx.state.tenancy!;
    const files = await readArchive(await readUploadedFile(ctx, 'file', ARCHIVE_LIMITS.maxArchiveBytes));
    const pkgs = importOrder(splitBundle(files));
    const rights = importRights(ctx);
    for (const pkg of pkgs) {
      if (!rights.may(pkg.manifest.type)) {
        const need = TYPE_SCOPES[pkg.manifest.type].write;
        throw problem(
          'forbidden',
          `Package "${pkg.folder}/" (${pkg.manifest.name}): importing a ${pkg.manifest.type} needs the ${need} permission in this space`,
        );
      }
    }
    const results = await importBundle(ctx.services.knex, pkgs, {
      orgId: t.org!.id,
      spaceId: t.space!.id,
      userId: ctx.state.auth!.userId,
      canWriteHome: rights.canWriteHome,
    });
    ctx.status = 201;
    ctx.body = { packages: results.map((r) => ({ packageId: fullName(r.pkg), type: r.type, version: r.version })) };
  },
});
