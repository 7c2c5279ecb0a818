import { problem } from '../../../shared/errors.ts';
import { StoredFileMissingError } from '../../../shared/files/storage.ts';
import { previewContentType, verifyPreviewToken } from '../../../shared/files/preview-token.ts';
import { defineRoute } from '../../route.ts';
import type { FileRow } from '../../../shared/files/model.ts';
import { fileIdParam } from './_access.ts';
import { contentDisposition } from './_content.ts';

/** A sandboxed document: no scripts, no plugins, no requests but the file's own images; no forms or navigation. */
export const PREVIEW_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

const str = (description: string) => ({ description, schema: { type: 'string' } });

export default defineRoute<unknown, { token: string }, { id: string }>({
  method: 'get',
  path: '/preview/files/:id',
  operationId: 'previewFile',
  summary: 'Show a file inline through a signed preview link',
  description:
    'The `token` from `POST /api/files/{id}/preview-url` is the credential (five minutes, this file only): a malformed, forged, ' +
    "other file's or expired token is 403 `preview_link_invalid`; a deleted file 404. " +
    'Served inline only for PNG, JPEG, GIF and WebP images, PDF and plain text (as `text/plain; charset=utf-8`), in a sandboxing ' +
    '`Content-Security-Policy` with `nosniff`; other types are 415 `preview_unsupported`. Limited to 120 requests a minute per ' +
    'client IP.',
  tag: 'Files',
  auth: 'none',
  rateLimit: { points: 120, duration: 60, by: 'ip' },
  params: fileIdParam,
  query: {
    type: 'object',
    required: ['token'],
    properties: { token: { type: 'string', minLength: 1, maxLength: 200, description: "The preview link's signed token" } },
  },
  responses: {
    200: {
      description: 'The file, inline',
      contentType: '*/*',
      schema: { type: 'string', format: 'binary' },
      headers: {
        'Content-Security-Policy': str(`\`${PREVIEW_CSP}\``),
        'X-Content-Type-Options': str('`nosniff`'),
        'Content-Disposition': str('`inline; filename="<ASCII>"; filename*=UTF-8\'\'<percent-encoded name>`'),
        'Cache-Control': str('`private, max-age=<seconds the link has left>`'),
      },
    },
  },
  async handler(ctx, { params, query }) {
    const { config, knex, files, log } = ctx.services;
    // The token first: without a valid one, nothing says whether the file exists.
    const expiresAt = verifyPreviewToken(config.secretsKey, params.id, query.token);
    if (!expiresAt) throw problem('preview_link_invalid', { detail: 'This preview link is invalid or expired; ask for a new one', param: 'token' });
    const file = await knex<FileRow>('files').where({ id: params.id }).first();
    if (!file) throw problem('not_found', 'No such file');
    const type = previewContentType(file.content_type);
    if (!type) throw problem('preview_unsupported', `Files of type ${file.content_type} are not previewed`);
    let body: NodeJS.ReadableStream;
    try {
      body = await files.get(file.storage_key);
    } catch (err) {
      if (!(err instanceof StoredFileMissingError)) throw err;
      log.error({ fileId: file.id, key: file.storage_key }, 'file row without stored bytes');
      throw problem('not_found', "The file's bytes are gone");
    }
    const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
    ctx.set('Content-Security-Policy', PREVIEW_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Disposition', contentDisposition('inline', file.name));
    ctx.set('Cache-Control', `private, max-age=${maxAge}`);
    // The link's token is in the URL: never hand it on to another site.
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Content-Type', type);
    ctx.status = 200;
    ctx.body = body;
    ctx.length = Number(file.size);
  },
});
