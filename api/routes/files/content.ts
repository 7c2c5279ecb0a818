import { problem } from '../../../shared/errors.ts';
import { StoredFileMissingError } from '../../../shared/files/storage.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleFile, fileIdParam } from './_access.ts';
import { contentDisposition, noneMatch, parseRange, safeContentType } from './_content.ts';

const binary = { type: 'string', format: 'binary' } as const;
const str = (description: string) => ({ description, schema: { type: 'string' } });
const common = {
  ETag: str('Strong: the quoted hex SHA-256 of the bytes'),
  'Accept-Ranges': str('`bytes`'),
  'X-Content-Type-Options': str('`nosniff`'),
  'Content-Disposition': str('`attachment; filename="<ASCII>"; filename*=UTF-8\'\'<percent-encoded name>` (RFC 6266, 8187)'),
};

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/files/:id/content',
  operationId: 'getFileContent',
  summary: "Download a file's bytes (ETag, byte ranges)",
  description:
    'Streams the bytes with the stored `Content-Type`, always as an attachment (`Content-Disposition: attachment`) with `X-Content-Type-Options: ' +
    'nosniff`; an inline view is `POST /api/files/{id}/preview-url`. ' +
    '`ETag` is the SHA-256: `If-None-Match` with it answers 304. One byte range (`Range: bytes=a-b`, `a-` or `-n`) answers 206 ' +
    'with `Content-Range`; a range past the end 416 `range_not_satisfiable` with `Content-Range: bytes */<size>`; ' +
    'several ranges, or an `If-Range` that is not the current ETag, answer the whole file (200). Visible as runs are; otherwise 404. Needs `files:read`.',
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'files:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: fileIdParam,
  headers: {
    Range: { description: 'One byte range: `bytes=a-b`, `bytes=a-` or `bytes=-n`', schema: { type: 'string' } },
    'If-None-Match': { description: 'The ETag held: 304 when the bytes are the same', schema: { type: 'string' } },
    'If-Range': { description: 'Serve the Range only while this is the current ETag', schema: { type: 'string' } },
  },
  responses: {
    200: { description: 'The whole file, in its stored content type', contentType: '*/*', schema: binary, headers: common },
    206: {
      description: 'The requested byte range',
      contentType: '*/*',
      schema: binary,
      headers: { ...common, 'Content-Range': str('`bytes <first>-<last>/<size>`') },
    },
    304: { description: 'Not modified: `If-None-Match` holds the current ETag', headers: { ETag: common.ETag } },
    416: {
      description: 'Range not satisfiable (`range_not_satisfiable`)',
      contentType: 'application/problem+json',
      schema: { $ref: '#/components/schemas/Problem' },
      headers: { 'Content-Range': str('`bytes */<size>`') },
    },
  },
  async handler(ctx, { params }) {
    const file = await findVisibleFile(ctx, params.id);
    const size = Number(file.size);
    const etag = `"${file.sha256}"`;
    ctx.set('ETag', etag);
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Cache-Control', 'private, no-cache');
    if (noneMatch(ctx.get('If-None-Match') || undefined, etag)) {
      ctx.status = 304;
      return;
    }
    const ifRange = ctx.get('If-Range');
    const range = ifRange && ifRange.trim() !== etag ? ({ kind: 'whole' } as const) : parseRange(ctx.get('Range') || undefined, size);
    if (range.kind === 'unsatisfiable') {
      throw problem('range_not_satisfiable', { detail: `The file has ${size} bytes`, param: 'Range', headers: { 'Content-Range': `bytes */${size}` } });
    }
    let body: NodeJS.ReadableStream;
    try {
      body = await ctx.services.files.get(file.storage_key, range.kind === 'partial' ? { start: range.start, end: range.end } : undefined);
    } catch (err) {
      if (!(err instanceof StoredFileMissingError)) throw err;
      ctx.services.log.error({ fileId: file.id, key: file.storage_key }, 'file row without stored bytes');
      throw problem('not_found', "The file's bytes are gone");
    }
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Disposition', contentDisposition('attachment', file.name));
    ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
    ctx.set('Content-Type', safeContentType(file.content_type)); // as stored (ctx.type would add a charset)
    if (range.kind === 'partial') {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    } else ctx.status = 200;
    ctx.body = body;
    ctx.length = range.kind === 'partial' ? range.end - range.start + 1 : size;
  },
});
