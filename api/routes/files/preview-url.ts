import { problem } from '../../../shared/errors.ts';
import { PREVIEW_TTL_SECONDS, previewContentType, signPreviewToken } from '../../../shared/files/preview-token.ts';
import { defineRoute } from '../../route.ts';
import { fileIdParam, findVisibleFile } from './_access.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'post',
  path: '/api/files/:id/preview-url',
  operationId: 'createFilePreviewUrl',
  summary: 'A five-minute link that shows the file inline (images, PDF, text)',
  description:
    'Answers a signed `GET /preview/files/{id}?token=` URL that works without credentials for five minutes (for an `<img>` or ' +
    'a new tab), for this file only. Nothing is stored: deleting the file ends the link early; losing access to it does not. ' +
    'Only PNG, JPEG, GIF and WebP images, PDF and plain text are previewed; other types (SVG among them) are 415 `preview_unsupported`: ' +
    'download them from `/content`. Visible as runs are; otherwise 404. Needs `files:read`.',
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'files:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: fileIdParam,
  responses: {
    200: {
      description: 'The preview link',
      schema: {
        type: 'object',
        required: ['object', 'url', 'expiresAt'],
        properties: {
          object: { const: 'preview_url' },
          url: { type: 'string', format: 'uri', description: 'Holds the signed token; works without credentials until `expiresAt`' },
          expiresAt: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
  async handler(ctx, { params }) {
    const file = await findVisibleFile(ctx, params.id);
    if (!previewContentType(file.content_type)) {
      throw problem('preview_unsupported', `Files of type ${file.content_type} are not previewed; download them from /api/files/${file.id}/content`);
    }
    const { config } = ctx.services;
    const expiresAt = new Date((Math.floor(Date.now() / 1000) + PREVIEW_TTL_SECONDS) * 1000);
    const token = signPreviewToken(config.secretsKey, file.id, expiresAt);
    ctx.body = {
      object: 'preview_url',
      url: `${config.publicUrl}/preview/files/${encodeURIComponent(file.id)}?token=${token}`,
      expiresAt: expiresAt.toISOString(),
    };
  },
});
