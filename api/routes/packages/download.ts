import { writeArchive } from '../../../shared/packages/archive.ts';
import { versionOrFail } from '../../../shared/packages/store.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, nameParam, readablePackage, scopeParam, versionParam } from '../../resources/packages.ts';

export default defineRoute<unknown, unknown, PackageParams & { version: string }>({
  method: 'get',
  path: '/api/packages/:scope/:name/:version/download',
  operationId: 'downloadPackageVersion',
  summary: 'A published version as a zip archive',
  description: '`version` is exact, the dist-tag `latest` or a semver range (the highest match is served).',
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 50, duration: 60, by: 'identity' },
  params: { type: 'object', required: ['scope', 'name', 'version'], properties: { scope: scopeParam, name: nameParam, version: versionParam } },
  responses: { 200: { description: 'The archive', contentType: 'application/zip', schema: { type: 'string', format: 'binary' } } },
  async handler(ctx, { params }) {
    const pkg = await readablePackage(ctx, params);
    const version = await versionOrFail(ctx.services.knex, pkg, params.version);
    const zip = await writeArchive(version.files);
    ctx.set('Content-Disposition', `attachment; filename="${pkg.scope.slice(1)}-${pkg.name}-${version.version}.zip"`);
    ctx.set('X-Package-Version', version.version);
    ctx.type = 'application/zip';
    ctx.body = zip;
  },
});
