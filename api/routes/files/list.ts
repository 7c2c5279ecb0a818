import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { type FileRow, fileDto, fileSchema } from '../../../shared/files/model.ts';
import { visibleFiles } from './_access.ts';

export default defineRoute<unknown, { runId?: string; limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/files',
  operationId: 'listFiles',
  summary: 'Files of the space, newest first (cursor pagination)',
  description:
    'Files are the inputs a run took and the outputs it wrote. Visible as runs are: with `runs:read-all` every file of the space, ' +
    "otherwise the caller's own (its API key's, its own, or, acting for an end-user, that end-user's). " +
    "`runId` lists one run's files. Unkept files expire seven days after creation (`expiresAt`); `POST /api/files/{id}/keep` keeps one. Needs `files:read`.",
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'files:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  query: {
    type: 'object',
    properties: { runId: { type: 'string', minLength: 1, maxLength: 100, description: 'Only the files of this run' }, ...cursorQuery },
  },
  responses: { 200: { description: 'Page of files', schema: listOf(fileSchema) } },
  async handler(ctx, { query }) {
    const base = visibleFiles(ctx);
    if (query.runId !== undefined) base.where({ run_id: query.runId });
    const { rows, hasMore } = await cursorPage<FileRow>(ctx, base, {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(fileDto), hasMore };
  },
});
