import { problem } from '../../../shared/errors.ts';
import { ARCHIVE_LIMITS, readArchive } from '../../../shared/packages/archive.ts';
import { draftEtag } from '../../../shared/packages/etag.ts';
import { importPackage, manifestOf } from '../../../shared/packages/import.ts';
import { TYPE_SCOPES, fullName } from '../../../shared/packages/types.ts';
import { defineRoute } from '../../route.ts';
import { authorityOf } from './_access.ts';
import { readUploadedFile } from './_multipart.ts';

export default defineRoute({
  method: 'post',
  path: '/api/packages/import',
  operationId: 'importPackage',
  summary: 'Import a package archive: publish manifest.version and refresh the draft',
  description:
    'Multipart field `file`: a zip (at most 10 MiB, 200 entries, 20 MiB inflated) with `manifest.json` at its root, plus `prompt.md` (agent) or `SKILL.md` (skill). ' +
    'Needs the type\'s write permission in the request space, which becomes the home of a new package; re-importing an existing package needs it in the package\'s home space. ' +
    'Publishing a version that exists is 409 `version_exists` and writes nothing.',
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 10, duration: 60, by: 'identity' },
  streamBody: {
    contentType: 'multipart/form-data',
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'The zip archive' } } },
  },
  responses: {
    201: {
      description: 'Published; the `ETag` header is the draft\'s',
      schema: {
        type: 'object',
        required: ['packageId', 'type', 'version'],
        properties: { packageId: { type: 'string' }, type: { type: 'string' }, version: { type: 'string' } },
      },
    },
  },
  async handler(ctx) {
    const t = ctx.state.tenancy!;
    const files = await readArchive(await readUploadedFile(ctx, 'file', ARCHIVE_LIMITS.maxArchiveBytes));
    const { type } = manifestOf(files);
    const need = TYPE_SCOPES[type].write;
    if (!t.scopes.has(need)) throw problem('forbidden', `Importing a ${type} needs the ${need} permission in this space`);
    const authority = authorityOf(ctx);
    const result = await importPackage(ctx.services.knex, {
      orgId: t.org!.id,
      spaceId: t.space!.id,
      userId: ctx.state.auth!.userId,
      files,
      canWriteHome: (pkg) => authority.holds(pkg.home_space_id, TYPE_SCOPES[pkg.type].write),
    });
    ctx.status = 201;
    ctx.set('ETag', draftEtag(result.pkg));
    ctx.body = { packageId: fullName(result.pkg), type: result.type, version: result.version };
  },
});
