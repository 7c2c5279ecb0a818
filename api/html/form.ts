// Reading the HTML forms' bodies (application/x-www-form-urlencoded, small).
import getRawBody from 'raw-body';
import { problem } from '../../shared/errors.ts';
import type { AppContext } from '../context.ts';

/** A form is small: 64 KiB at most. */
export const FORM_BODY_LIMIT = 64 * 1024;

export async function readForm(ctx: AppContext): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw problem('unsupported_media_type', `Send the form as application/x-www-form-urlencoded, not ${ctx.get('Content-Type') || 'no content type'}`);
  }
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit: FORM_BODY_LIMIT, encoding: 'utf8' });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw problem('payload_too_large', `The form exceeds ${FORM_BODY_LIMIT} bytes`);
    throw err;
  }
  return new URLSearchParams(raw);
}
