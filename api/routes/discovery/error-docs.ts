import { ERROR_CATALOG, type ErrorCode } from '../../../shared/errors.ts';
import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

export default defineRoute<unknown, unknown, { code: string }>({
  method: 'get',
  path: '/api/docs/errors/:code',
  operationId: 'getErrorDoc',
  summary: 'What a problem `type` means',
  description: 'The `type` URI of every problem document resolves here.',
  tag: 'Discovery',
  auth: 'none',
  params: { type: 'object', required: ['code'], properties: { code: { type: 'string', pattern: '^[a-z0-9-]+$' } } },
  responses: { 200: { description: 'HTML description', contentType: 'text/html', schema: { type: 'string' } } },
  handler(ctx, { params }) {
    const code = params.code.replace(/-/g, '_') as ErrorCode;
    const entry = ERROR_CATALOG[code];
    if (!entry) throw problem('not_found', 'No such error code');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body =
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(entry.title)}</title></head><body>\
<h1>${escapeHtml(entry.title)}</h1><p>HTTP ` + `${entry.status}, <code>code: ${code}</code></p><p>${escapeHtml(entry.description)}</p></body></html>`;
  },
});
