// JSON request bodies: content type checked, size capped by API_BODY_LIMIT_BYTES, raw bytes
// kept (idempotency fingerprints hash them), parse errors answered as problems, text Postgres
// cannot store refused (storable-text.ts).
import getRawBody from 'raw-body';
import { problem } from '../../shared/errors.ts';
import type { AppContext } from '../context.ts';
import { assertStorableJson } from './storable-text.ts';

export async function readJsonBody(ctx: AppContext): Promise<unknown> {
  const limit = ctx.services.config.apiBodyLimitBytes;
  const length = Number(ctx.get('Content-Length') || 0);
  if (length > limit) throw problem('payload_too_large', `The body is ${length} bytes; the limit is ${limit}`);
  const hasBody = length > 0 || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return undefined;
  if (!ctx.is('application/json', '+json')) {
    throw problem('unsupported_media_type', `Send the body as application/json, not ${ctx.get('Content-Type') || 'no content type'}`);
  }
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { limit });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      throw problem('payload_too_large', `The body exceeds the limit of ${limit} bytes`);
    }
    throw err;
  }
  ctx.state.rawBody = raw;
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw problem('invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
  assertStorableJson(parsed, text);
  return parsed;
}
