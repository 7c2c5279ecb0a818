import { defineRoute } from '../../route.ts';
import { fileDto, fileSchema } from '../../../shared/files/model.ts';
import { fileIdParam, findVisibleFile } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/files/:id',
  operationId: 'getFile',
  summary: "Read a file's metadata",
  description:
    'Visible as runs are (see `GET /api/files`); a file the caller cannot read is 404. The bytes are at `/api/files/{id}/content`. Needs `files:read`.',
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'files:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: fileIdParam,
  responses: { 200: { description: 'The file', schema: fileSchema } },
  async handler(ctx, { params }) {
    ctx.body = fileDto(await findVisibleFile(ctx, params.id));
  },
});
