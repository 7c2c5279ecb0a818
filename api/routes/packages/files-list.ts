import { draftEtag } from '../../../shared/packages/etag.ts';
import { fileBytes } from '../../../shared/packages/types.ts';
import { versionOrFail } from '../../../shared/packages/store.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { type PackageParams, packageParams, readablePackage, versionParam } from '../../resources/packages.ts';

export default defineRoute<unknown, { version?: string }, PackageParams>({
  method: 'get',
  path: '/api/packages/:scope/:name/files',
  operationId: 'listPackageFiles',
  summary: 'Files of the draft, or of a published version with `?version=`',
  description: "Without `version` the draft is listed and the `ETag` header is the draft's.",
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 50, duration: 60, by: 'identity' },
  params: packageParams,
  query: { type: 'object', properties: { version: versionParam } },
  responses: {
    200: {
      description: 'Files sorted by path; size in bytes',
      schema: listOf({
        type: 'object',
        required: ['path', 'size'],
        properties: { object: { const: 'package_file' }, path: { type: 'string' }, size: { type: 'integer' }, encoding: { enum: ['utf8', 'base64'] } },
      }),
    },
  },
  async handler(ctx, { params, query }) {
    const pkg = await readablePackage(ctx, params);
    let files = pkg.draft_files;
    if (query.version !== undefined) files = (await versionOrFail(ctx.services.knex, pkg, query.version, 'query')).files;
    else ctx.set('ETag', draftEtag(pkg));
    const data = Object.keys(files)
      .sort()
      .map((path) => ({ object: 'package_file' as const, path, size: fileBytes(files[path]).length, encoding: files[path].encoding }));
    ctx.body = { object: 'list', data, hasMore: false };
  },
});
