import { problem } from '../../../shared/errors.ts';
import { fileBytes } from '../../../shared/packages/types.ts';
import { versionOrFail } from '../../../shared/packages/store.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, packageParams, readablePackage, versionParam } from '../../resources/packages.ts';

export default defineRoute<unknown, { path: string; version?: string }, PackageParams>({
  method: 'get',
  path: '/api/packages/:scope/:name/files/content',
  operationId: 'getPackageFileContent',
  summary: 'One file of the draft, or of a published version with `?version=`',
  description: 'Text files come back as `encoding: utf8`, binary files as `encoding: base64`.',
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 50, duration: 60, by: 'identity' },
  params: packageParams,
  query: { type: 'object', required: ['path'], properties: { path: { type: 'string', minLength: 1, maxLength: 255 }, version: versionParam } },
  responses: {
    200: {
      description: 'The file',
      schema: {
        type: 'object',
        required: ['object', 'path', 'size', 'encoding', 'content'],
        properties: {
          object: { const: 'package_file' },
          path: { type: 'string' },
          size: { type: 'integer' },
          encoding: { enum: ['utf8', 'base64'] },
          content: { type: 'string' },
          version: { type: ['string', 'null'] },
        },
      },
    },
  },
  async handler(ctx, { params, query }) {
    const pkg = await readablePackage(ctx, params);
    const version = query.version !== undefined ? await versionOrFail(ctx.services.knex, pkg, query.version, 'query') : undefined;
    const files = version ? version.files : pkg.draft_files;
    const file = Object.hasOwn(files, query.path) ? files[query.path] : undefined;
    if (!file) throw problem('not_found', { detail: `No file ${query.path} in ${version ? `version ${version.version}` : 'the draft'}`, param: 'path' });
    ctx.body = {
      object: 'package_file',
      path: query.path,
      size: fileBytes(file).length,
      encoding: file.encoding,
      content: file.content,
      version: version?.version ?? null,
    };
  },
});
