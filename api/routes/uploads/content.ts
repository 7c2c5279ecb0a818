import { sha256Hex } from '../../../shared/crypto.ts';
import { problem } from '../../../shared/errors.ts';
import { type UploadRow, uploadDto, uploadSchema } from '../../../shared/files/model.ts';
import { SizeMismatchError } from '../../../shared/files/storage.ts';
import { newToken } from '../../../shared/ids.ts';
import { defineRoute } from '../../route.ts';
import { formatBytes } from './_shared.ts';

const gone = () => problem('upload_link_gone', 'This upload URL is unknown, expired, or already used; create a new upload');

export default defineRoute<unknown, { token: string }>({
  method: 'put',
  path: '/api/uploads/_content',
  operationId: 'putUploadContent',
  summary: 'Send the bytes of an upload (the upload URL)',
  description:
    'The `token` of the upload URL is the credential: no other authentication. `Content-Length` must equal the declared `size` ' +
    '(400 `validation_failed` otherwise; 413 `file_too_large` above `FILE_MAX_BYTES`); any `Content-Type` is accepted, the declared ' +
    '`contentType` stands. ' +
    'The bytes are streamed to storage and kept only when exactly `size` arrived: a short, long or broken body stores nothing ' +
    'and the upload stays pending, so the URL can be retried until it expires. ' +
    'An unknown, expired or completed token is 410 `upload_link_gone`. Limited to 60 requests a minute per client IP.',
  tag: 'Files',
  auth: 'none',
  rateLimit: { points: 60, duration: 60, by: 'ip' },
  query: {
    type: 'object',
    required: ['token'],
    properties: { token: { type: 'string', minLength: 1, maxLength: 200, description: "The upload URL's token" } },
  },
  streamBody: { contentType: 'application/octet-stream', schema: { type: 'string', format: 'binary' } },
  responses: { 200: { description: 'Stored; the upload is completed', schema: uploadSchema } },
  async handler(ctx, { query }) {
    const { config, knex, files } = ctx.services;
    const tokenHash = sha256Hex(query.token);
    const live = () => knex<UploadRow>('uploads').where({ token_hash: tokenHash }).whereNull('completed_at').where('expires_at', '>', knex.fn.now());
    // A request without a body (no Content-Length, or 0: an upload declares at least one byte)
    // is malformed whatever its token: 400 before the token is looked at.
    const header = ctx.get('Content-Length');
    if (!/^[1-9]\d*$/.test(header)) {
      throw problem('validation_failed', {
        detail: "Send the bytes with Content-Length equal to the upload's declared size",
        param: 'Content-Length',
        errors: [{ field: 'Content-Length', code: 'required', message: "Content-Length must be the upload's size" }],
      });
    }
    const upload = await live().first();
    if (!upload) throw gone();
    const size = Number(upload.size);
    const length = Number(header);
    if (length > config.fileMaxBytes)
      throw problem('file_too_large', {
        detail: `The body is ${length} bytes; the limit (FILE_MAX_BYTES) is ${formatBytes(config.fileMaxBytes)}`,
        param: 'Content-Length',
      });
    const mismatch = (received: string) =>
      problem('validation_failed', {
        detail: `The upload's size is ${size} bytes; ${received}`,
        param: 'size',
        errors: [{ field: 'size', code: 'size_mismatch', message: `Send exactly ${size} bytes` }],
      });
    if (length !== size) throw mismatch(`Content-Length is ${length}`);
    // Each attempt writes its own key; the one that completes the row first wins, so two
    // concurrent PUTs of one token cannot mix their bytes.
    const key = `${upload.org_id}/uploads/${upload.id}-${newToken(9)}`;
    let sha256: string;
    try {
      ({ sha256 } = await files.put(key, ctx.req, size));
    } catch (err) {
      if (err instanceof SizeMismatchError) throw mismatch(`${err.received} bytes arrived`);
      // The client went away mid-body: nothing was stored; not a server failure to log as one.
      if (ctx.req.readableAborted || (err as NodeJS.ErrnoException).code === 'ECONNRESET') throw mismatch('the body broke off before its end');
      throw err;
    }
    const [done] = await live()
      .update({ completed_at: knex.fn.now() as unknown as Date, sha256, storage_key: key })
      .returning('*');
    if (!done) {
      await files.delete(key);
      throw gone();
    }
    ctx.body = uploadDto(done);
  },
});
