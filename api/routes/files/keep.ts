import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';
import { type FileRow, fileDto, fileSchema } from '../../../shared/files/model.ts';
import { fileIdParam, findVisibleFile } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'post',
  path: '/api/files/:id/keep',
  operationId: 'keepFile',
  summary: 'Keep a file: it no longer expires',
  description:
    "Clears the file's expiry (`kept: true`, `expiresAt: null`); keeping a kept file changes nothing. Kept files count against " +
    "the organization's storage quota until deleted. " +
    'Needs `files:delete`: there is no `files:write`, and keeping decides, like deleting, how long the bytes stay and what the ' +
    'quota holds. Visible as runs are; otherwise 404.',
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'files:delete',
  rateLimit: { points: 60, duration: 60, by: 'identity' },
  params: fileIdParam,
  responses: { 200: { description: 'The kept file', schema: fileSchema } },
  async handler(ctx, { params }) {
    const file = await findVisibleFile(ctx, params.id);
    // Waits for a sweep holding the row; a file the sweep deleted meanwhile is 404.
    const [row] = await ctx.services.knex<FileRow>('files').where({ id: file.id }).update({ kept: true, expires_at: null }).returning('*');
    if (!row) throw problem('not_found', 'No such file');
    ctx.body = fileDto(row);
  },
});
