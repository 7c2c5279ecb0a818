import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';
import { unreferencedKeys } from '../../../shared/files/expiry.ts';
import type { FileRow } from '../../../shared/files/model.ts';
import { fileIdParam, findVisibleFile } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/files/:id',
  operationId: 'deleteFile',
  summary: 'Delete a file and its bytes',
  description:
    'Removes the file and its stored bytes (bytes another file or a pending upload still uses stay until those go). Visible as ' +
    'runs are; a file the caller cannot read is 404. Needs `files:delete`.',
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'files:delete',
  rateLimit: { points: 60, duration: 60, by: 'identity' },
  params: fileIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const { knex, files } = ctx.services;
    const file = await findVisibleFile(ctx, params.id);
    // The row is locked while its bytes go, so the expiry sweep (which skips locked rows) and a
    // concurrent delete cannot interleave; bytes go first, so a failure leaves the row to retry.
    await knex.transaction(async (trx) => {
      const row = await trx<FileRow>('files').where({ id: file.id }).forUpdate().first();
      if (!row) throw problem('not_found', 'No such file');
      for (const key of await unreferencedKeys(trx, [row.storage_key], { files: [row.id] })) await files.delete(key);
      await trx('files').where({ id: row.id }).delete();
    });
    ctx.status = 204;
  },
});
