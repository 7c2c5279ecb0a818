import { ARCHIVE_LIMITS, readArchive } from '../../../shared/packages/archive.ts';
import { manifestOf } from '../../../shared/packages/import.ts';
import { defineRoute } from '../../route.ts';
import { importedSchema, importOne } from './_import.ts';
import { readUploadedFile } from './_multipart.ts';

export default defineRoute({
  method: 'post',
  path: '/api/packages/import',
  operationId: 'importPackage',
  summary: 'Import a package archive: publish manifest.version and refresh the draft',
  description:
    'Multipart field `file`: a zip (at most 10 MiB, 200 entries, 20 MiB inflated) with `manifest.json` at its root (any `schema_version` ' +
    '0.x; another major is 400 naming `0.x`), plus `prompt.md` (agent: a Mustache template, 400 `validation_failed` naming the ' +
    'line when it does not parse) or `SKILL.md` (skill). ' +
    "Needs the type's write permission in the request space, which becomes the home of a new package; re-importing an existing " +
    "package needs it in the package's home space. " +
    'Publishing a version that exists is 409 `version_exists` and writes nothing.',
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  streamBody: {
    contentType: 'multipart/form-data',
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'The zip archive' } } },
  },
  responses: { 201: { description: "Published; the `ETag` header is the draft's", schema: importedSchema } },
  async handler(ctx) {
    const files = await readArchive(await readUploadedFile(ctx, 'file', ARCHIVE_LIMITS.maxArchiveBytes));
    await importOne(ctx, files, manifestOf(files).type);
  },
});
