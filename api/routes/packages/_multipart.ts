// Reads one file field of a multipart/form-data upload into memory, with hard limits.
import busboy from 'busboy';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';

const MULTIPART_OVERHEAD = 1024 * 1024;

function malformed(detail: string): Error {
  return problem('validation_failed', { detail, errors: [{ field: 'file', code: 'invalid', message: detail }] });
}

/**
 * The bytes of field `field`. Above `maxFileBytes` the file is 413 `archive_too_large` (the rest
 * of the body is still drained so the client reads the answer); a body far larger than that is cut.
 */
export async function readUploadedFile(ctx: AppContext, field: string, maxFileBytes: number): Promise<Buffer> {
  if (!ctx.is('multipart/form-data')) {
    throw problem(
      'unsupported_media_type',
      `Send the archive as multipart/form-data with a "${field}" part, not ${ctx.get('Content-Type') || 'no content type'}`,
    );
  }
  const hardCap = Math.max(maxFileBytes, ctx.services.config.apiBodyLimitBytes) + MULTIPART_OVERHEAD;
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > hardCap) throw problem('archive_too_large', `The upload is ${declared} bytes; an archive may be at most ${maxFileBytes}`);

  return new Promise<Buffer>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: ctx.req.headers, limits: { files: 1, fileSize: maxFileBytes, fields: 20, fieldSize: 4096, parts: 40 } });
    } catch (err) {
      reject(malformed(`The multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    const chunks: Buffer[] = [];
    let found = false;
    let truncated = false;
    let received = 0;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(bb);
      ctx.req.resume();
      reject(err);
    };
    ctx.req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > hardCap) {
        fail(problem('archive_too_large', `The upload exceeds ${hardCap} bytes`));
        ctx.req.destroy();
      }
    });
    bb.on('file', (name, stream) => {
      if (name !== field || found) {
        stream.resume();
        return;
      }
      found = true;
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        truncated = true;
      });
    });
    bb.on('error', (err) => fail(malformed(`The multipart body cannot be read: ${(err as Error).message}`)));
    bb.on('close', () => {
      if (failed) return;
      if (truncated) reject(problem('archive_too_large', `The archive exceeds ${maxFileBytes} bytes`));
      else if (!found)
        reject(problem('validation_failed', { detail: `${field} is required`, errors: [{ field, code: 'required', message: `${field} is required` }] }));
      else resolve(Buffer.concat(chunks));
    });
    ctx.req.pipe(bb);
  });
}
